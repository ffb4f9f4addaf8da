/** magi's version, as `magi --version` and `magi mcp`'s handshake say it. */
export const VERSION = "0.1.0"
