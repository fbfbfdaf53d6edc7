// The companion extension's fixed id (its manifest carries a `key`; see extension/manifest.json).
export const EXTENSION_ID = process.env.VERITY_EXTENSION_ID ?? 'pending-extension-key';
