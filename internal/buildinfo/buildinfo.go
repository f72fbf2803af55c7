// Package buildinfo holds the version the release recipe stamps into both
// binaries (scripts/release.sh: -ldflags "-X
// github.com/cxray/cxray/internal/buildinfo.Version=v1.2.3").
package buildinfo

// Version is "dev" unless the linker set it.
var Version = "dev"
