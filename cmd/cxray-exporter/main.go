// Command cxray-exporter serves what cxray reads from ConnectX adapters as
// Prometheus metrics: one daemon per host, as node_exporter and
// dcgm-exporter are deployed (docs/exporter.md; contrib/ holds the systemd
// unit, the container recipe and the Kubernetes chart). The command line is
// package cli/exporterd.
package main

import (
	"os"

	"github.com/cxray/cxray/cli/exporterd"
)

func main() { os.Exit(exporterd.Main()) }
