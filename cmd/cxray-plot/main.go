// Command cxray-plot draws a cxray monitor file as a chart; `cxray plot`
// runs it. The command line is package cli/plotd.
package main

import (
	"os"

	"github.com/cxray/cxray/cli/plotd"
)

func main() { os.Exit(plotd.Main()) }
