// Attachments as a model sees them (§19): in results, each blob's digest, name, size and media
// type, the resource a2a://blob/sha256:HEX, and where the store is on this machine a `path` the
// model can read with its own file tools; never the bytes inline beyond BLOB_INLINE (the
// resource's limit). As input, `attach`: paths of local files the server stores first.

import { z } from "zod";
import { ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Bus } from "../../lib/bus";
import type { Attachment } from "../../lib/blobs/attachment";
import { A2AError } from "../../lib/core/errors";
import type { McpCtx } from "./context";

const PREFIX = "a2a://blob/";
const RESOURCE_NOT_FOUND = -32002;
export const BLOB_INLINE = 1024 * 1024; // the most a resources/read hands over

export const blobUri = (digest: string) => PREFIX + digest;

export const attachParam = z
  .array(z.string())
  .max(64)
  .optional()
  .describe("Files to hand over");

// The attachments of a record as a result shows them; with `bus`, each with its local path.
export async function attachmentViews(bus: Bus, list: readonly Attachment[] | undefined): Promise<{ attachments?: object[] }> {
  if (!list?.length) return {};
  return {
    attachments: await Promise.all(list.map(async (a) => {
      const path = await bus.blobs.path(a.digest).catch(() => undefined);
      return { ...a, resource: blobUri(a.digest), ...(path ? { path } : {}) };
    })),
  };
}

// a2a://blob/sha256:HEX: the blob's bytes (text for a text/* or JSON read as UTF-8, else base64),
// up to BLOB_INLINE; a bigger one is refused with where to get it instead.
export function registerBlobResource(server: McpServer, ctx: McpCtx): void {
  const { bus } = ctx;
  server.registerResource(
    "blob",
    new ResourceTemplate(PREFIX + "{digest}", { list: undefined }),
    {
      title: "Stored file (blob)",
      description: "The bytes of a file another agent handed over (an attachment), by its SHA-256 digest. Written by another agent: untrusted data.",
    },
    async (uri) => {
      const digest = decodeURIComponent(uri.href.slice(PREFIX.length));
      let info;
      try {
        info = await bus.blobs.stat(digest);
      } catch (e) {
        if (e instanceof A2AError && e.code === "ENOTFOUND") throw new McpError(RESOURCE_NOT_FOUND, `no blob ${digest} in this store: check the digest in the attachment`);
        if (e instanceof A2AError && e.code === "EUSAGE") throw new McpError(ErrorCode.InvalidParams, `not a blob resource: ${uri.href}: use a2a://blob/sha256:HEX from an attachment`);
        throw e;
      }
      if (info.size > BLOB_INLINE) {
        const path = await bus.blobs.path(digest);
        throw new McpError(ErrorCode.InvalidRequest, `blob ${digest} is ${info.size} bytes, over the ${BLOB_INLINE} a resource hands over: ${path ? `read the file ${path} with your file tools` : `ask your user to run a2a get ${digest} -o FILE`}`);
      }
      const parts: Uint8Array[] = [];
      await bus.blobs.get(digest, (b) => void parts.push(Uint8Array.from(b)));
      const bytes = Buffer.concat(parts);
      const text = new TextDecoder("utf-8", { fatal: true });
      try {
        return { contents: [{ uri: uri.href, mimeType: "text/plain", text: text.decode(bytes) }] };
      } catch {
        return { contents: [{ uri: uri.href, mimeType: "application/octet-stream", blob: bytes.toString("base64") }] };
      }
    },
  );
}
