/** This build's version: what `magi --version` prints and what each host registers, so `magi hosts` shows a host left behind. */
export const VERSION = "0.1.0"
