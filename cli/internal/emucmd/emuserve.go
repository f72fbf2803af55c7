package emucmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/emu/ctl"
)

// emuServeOptions holds the flags of the "serve" command.
type emuServeOptions struct {
	scenarioFile, profile, socket string
}

func (a *app) emuServeCmd() *cobra.Command { return a.newEmuServeCmd(nil) }

// newEmuServeCmd wires the flags to emuServeOptions; runF (tests) replaces runEmuServe.
func (a *app) newEmuServeCmd(runF func(*emuServeOptions, []string) error) *cobra.Command {
	o := &emuServeOptions{}
	c := &cobra.Command{
		Use:   "serve [--scenario FILE | --profile P] [--socket PATH] [-- CMD...]",
		Short: "Keep emulated adapters running, with a control socket for faults and the clock",
		Long: `Serve the emulated adapters as /sys/bus/pci/devices in a private mount
namespace, like 'emu run', and keep them running until CMD exits (by default an
interactive shell on a terminal, or forever otherwise). A control socket lets
'cxray emu ctl' switch faults on and off and advance a manual clock while tools
use the devices. Other shells can join the namespace with the nsenter line it
prints. Needs root and /dev/fuse.`,
		Example: `  cxray emu serve --scenario examples/two-adapters.yaml
  cxray emu serve --profile cx6dx-2p100g --socket /tmp/emu.sock -- sleep 3600`,
		Args: cobra.ArbitraryArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runEmuServe(a.Ctx, o, args)
		},
	}
	c.Flags().StringVar(&o.scenarioFile, "scenario", "", "scenario file (YAML) describing the emulated adapters")
	c.Flags().StringVar(&o.profile, "profile", "", "one adapter of this profile")
	c.Flags().StringVar(&o.socket, "socket", ctl.DefaultSocket, "control socket path")
	commandAfterFlags(c)
	return c
}

// runEmuServe is the work of the "serve" command, apart from its cobra wiring.
func (a *app) runEmuServe(ctx context.Context, o *emuServeOptions, args []string) error {
	name, err := emuName(o.scenarioFile, o.profile)
	if err != nil {
		return err
	}
	sock, err := filepath.Abs(o.socket)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	if len(args) == 0 {
		if f, ok := a.Stdin.(*os.File); ok && cmdutil.IsTerminal(f) {
			sh := os.Getenv("SHELL")
			if sh == "" {
				sh = "/bin/sh"
			}
			args = []string{sh}
		} else {
			args = []string{"sleep", "infinity"}
		}
	}
	return a.runInNamespace(runPayload{Name: name, Socket: sock}, args)
}

// emuCtlOptions holds the flags of the "ctl" command.
type emuCtlOptions struct {
	socket, bdf string
}

func (a *app) emuCtlCmd() *cobra.Command { return a.newEmuCtlCmd(nil) }

// newEmuCtlCmd wires the flags to emuCtlOptions; runF (tests) replaces runEmuCtl.
func (a *app) newEmuCtlCmd(runF func(*emuCtlOptions, []string) error) *cobra.Command {
	o := &emuCtlOptions{}
	c := &cobra.Command{
		Use:   "ctl status | fault NAME=VALUE... | clear | module N FAULT... | plug N MODULE | nv NAME=VALUE... | advance DURATION",
		Short: "Control a running 'cxray emu serve': faults and the clock",
		Long: `Talk to a running 'cxray emu serve':
  status                 the emulated functions, who holds their gateway and
                         ICMD semaphores, and their active faults
  fault NAME=VALUE...    switch faults on (--bdf limits to one function):
                         ` + strings.Join(ctl.FaultNames(), ", ") + `
                         (register_status=0x9020:4 makes MGIR answer status 4; =none clears;
                         pcie.aer=BadTLP:5 injects AER errors, pcie.width=8 retrains the
                         link: docs/pcie.md)
  clear                  switch every fault off
  module N [FAULT...]    set the faults of cage N (none clears): i2c_hang,
                         no_ddm, frozen_monitors, checksum_error, ...
  plug N MODULE          put a catalog module into cage N (empty pulls it
                         out; --bdf picks the adapter when there are several)
  nv NAME=VALUE...       NV store faults: no_access=true, erase_exceeded=true,
                         reject_writes=TLV[,TLV] (* for all)
  advance DURATION       move a manual clock (10m, 1h)

Module plugs and the clock are the device's state: they are kept, and every
command on the same scenario sees them. Faults are this emulator's only.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runEmuCtl(a.Ctx, o, args)
		},
	}
	c.Flags().StringVar(&o.socket, "socket", ctl.DefaultSocket, "control socket of the emulator")
	c.Flags().StringVar(&o.bdf, "bdf", "", "apply fault/clear to this function only")
	return c
}

// runEmuCtl is the work of the "ctl" command, apart from its cobra wiring.
func (a *app) runEmuCtl(ctx context.Context, o *emuCtlOptions, args []string) error {
	req := ctl.Request{Op: args[0], BDF: o.bdf}
	switch args[0] {
	case "status", "clear":
		if len(args) != 1 {
			return cmdutil.UsageErr("%s takes no arguments", args[0])
		}
	case "fault":
		if len(args) < 2 {
			return cmdutil.UsageErr("fault needs NAME=VALUE settings: %s", strings.Join(ctl.FaultNames(), ", "))
		}
		req.Set = map[string]string{}
		for _, kv := range args[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return cmdutil.UsageErr("%q is not NAME=VALUE", kv)
			}
			req.Set[k] = v
		}
	case "module":
		if len(args) < 2 {
			return cmdutil.UsageErr("module needs a cage number and its faults (none for no fault)")
		}
		m, err := strconv.Atoi(args[1])
		if err != nil || m < 0 {
			return cmdutil.UsageErr("module %q: give the cage number (0, 1, ...)", args[1])
		}
		req.Module = m
		for _, f := range args[2:] {
			if f != "none" {
				req.ModuleFaults = append(req.ModuleFaults, f)
			}
		}
	case "plug":
		if len(args) != 3 {
			return cmdutil.UsageErr("plug needs a cage number and a module (empty pulls it out)")
		}
		m, err := strconv.Atoi(args[1])
		if err != nil || m < 0 {
			return cmdutil.UsageErr("plug %q: give the cage number (0, 1, ...)", args[1])
		}
		req.Module, req.Kind = m, args[2]
	case "nv":
		req.NV = map[string]string{}
		for _, kv := range args[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return cmdutil.UsageErr("%q is not NAME=VALUE", kv)
			}
			req.NV[k] = v
		}
	case "advance":
		if len(args) != 2 {
			return cmdutil.UsageErr("advance needs one duration, e.g. 10m")
		}
		req.Duration = args[1]
	default:
		return cmdutil.UsageErr("unknown ctl command %q; use status, fault, clear, module, plug, nv or advance", args[0])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := ctl.Call(ctx, o.socket, req)
	if err != nil {
		if resp != nil {
			return cmdutil.UsageWrap(err) // the emulator refused the request
		}
		return cmdutil.DeviceErr(err)
	}
	if a.JSON() {
		return a.WriteJSON(resp)
	}
	fmt.Fprintf(a.Stdout, "emulator pid %d, clock %s", resp.PID, resp.Clock)
	if resp.Manual {
		fmt.Fprint(a.Stdout, " (manual)")
	}
	fmt.Fprintln(a.Stdout)
	if resp.State != "" {
		fmt.Fprintf(a.Stdout, "state: %s\n", resp.State)
	}
	t := a.NewTable("BDF", "ADAPTER", "PROFILE", "NETDEV", "RDMA", "SEMAPHORES", "FAULTS")
	for _, f := range resp.Functions {
		var fs []string
		for k, v := range f.Faults {
			fs = append(fs, k+"="+v)
		}
		sort.Strings(fs)
		t.Row(f.BDF, f.Adapter, f.Profile, cmdutil.Dash(f.Netdev), cmdutil.Dash(f.RDMA), semaphores(f.Semaphores), cmdutil.Dash(strings.Join(fs, " ")))
	}
	t.Flush()
	return nil
}

// semaphores says who holds a function's semaphores ("free" when no one).
func semaphores(s ctl.Semaphores) string {
	var held []string
	if s.Gateway != 0 {
		held = append(held, fmt.Sprintf("gateway=%#x", s.Gateway))
	}
	if s.ICMD != 0 {
		held = append(held, fmt.Sprintf("icmd=%#x", s.ICMD))
	}
	if s.ICMDBusy {
		held = append(held, "icmd-busy")
	}
	if len(held) == 0 {
		return "free"
	}
	return strings.Join(held, " ")
}
