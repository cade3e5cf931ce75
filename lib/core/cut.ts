// A text shortened for a message or a preview: its first `max` characters, then "…".
export const cut = (text: string, max: number): string => (text.length > max ? text.slice(0, max) + "…" : text);
