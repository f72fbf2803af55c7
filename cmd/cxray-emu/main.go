// Command cxray-emu serves the emulated adapters over FUSE inside the mount
// namespace of `cxray emu run` and `cxray emu serve`, which start it; the
// program is package cli/emud.
package main

import (
	"os"

	"github.com/cxray/cxray/cli/emud"
)

func main() { os.Exit(emud.Main()) }
