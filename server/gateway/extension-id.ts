// The companion extension's fixed id: derived from the public key in extension/manifest.json (`key`),
// as Chrome does: the first 32 hex digits of sha256(DER public key), each mapped 0-f to a-p. A build signed
// with another key has another id: the gateway is given it (GatewayOptions.extensionId, VERITY_EXTENSION_ID).
export const EXTENSION_ID = 'aehmmekdcffbjdehcemegbhmemnbmdmh';
