// How much of each message body a listing carries unless asked otherwise: a preview (the whole
// body is read by recv). A constant front ends word their help by, so it lives apart from storage.
export const LIST_BODY_CHARS = 200;
