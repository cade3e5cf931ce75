// Text from the store (a pattern, a reason, a name, a body) shown on a terminal: inert. An ESC
// sequence can hide, rewrite or recolour what a terminal shows, a carriage return overwrite a
// line, a bidirectional override reorder it; written as escapes they are seen for what they are.
// Kept apart from frame.ts so that the error path (dispatch.ts) loads nothing more.

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const escape = (c: string) => {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
};

// `text` with every control character but newline and tab written as an escape.
export const escapeControls = (text: string): string => text.replace(CONTROL, escape);

// The same for text that must stay on its one line (a table cell, an error): newline and tab too.
export const inertLine = (text: string): string => escapeControls(text).replace(/[\n\t]/g, escape);
