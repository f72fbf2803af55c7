// Command cxray is a toolkit for NVIDIA/Mellanox ConnectX (mlx5) adapters:
// the PRM register database, register access, optics, NV configuration,
// baselines and monitoring. See the README; the command line itself is
// package cli.
package main

import (
	"os"

	"github.com/cxray/cxray/cli"
)

func main() { os.Exit(cli.Main()) }
