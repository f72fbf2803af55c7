package nvconf

// defaultLockDir is where real adapters' NV locks live: /run is root's
// (tmpfs, emptied at boot), so /run/cxray is made by root alone.
const defaultLockDir = "/run/cxray/nv-locks"
