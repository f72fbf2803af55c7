package emucmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/emu/ctl"
	"github.com/cxray/cxray/emu/emuadapter"
	"github.com/cxray/cxray/emu/nsrun"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/emu/state"
	"github.com/cxray/cxray/emu/sysfs"
)

func (a *app) emuCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "emu",
		Short: "The emulated ConnectX adapters: profiles, and running tools against them",
		Long: `cxray carries a software ConnectX-7 (and ConnectX-6 Dx) that speaks the same
bytes as the hardware at the PCI config-space boundary. Use it in-process with
-d emu, emu:PROFILE or emu:FILE.yaml, or run any program against it with
'cxray emu run', which serves the emulated functions as /sys/bus/pci/devices
inside a private mount namespace.

The emulated devices keep their state between commands, like a device:
what one command writes (registers, NV configuration, resets, module plugs,
a manual clock) the next one reads, one state per profile or scenario file,
shared by -d emu, 'emu run' and 'emu serve' ('emu status' lists the states,
'emu reset' starts over; CXRAY_EMU_STATE=off keeps none).`,
	}
	c.AddCommand(a.emuRunCmd(), a.emuServeCmd(), a.emuCtlCmd(), a.emuProfilesCmd(), a.emuStatusCmd(), a.emuResetCmd(), a.emuImageCmd())
	return c
}

type emuRunOptions struct {
	scenarioFile, profile string
}

func (a *app) emuRunCmd() *cobra.Command { return a.newEmuRunCmd(nil) }

// newEmuRunCmd wires the flags to emuRunOptions; runF (tests) replaces
// runEmuRun. args is the command to run.
func (a *app) newEmuRunCmd(runF func(*emuRunOptions, []string) error) *cobra.Command {
	var o emuRunOptions
	c := &cobra.Command{
		Use:   "run [--scenario FILE | --profile P] -- CMD [ARGS...]",
		Short: "Run a command with the emulated adapters as its /sys/bus/pci/devices",
		Long: `Run CMD in a private mount namespace in which the emulated PCI functions are
served with FUSE over /sys/bus/pci/devices: unmodified tools (mstflint, mstreg,
mstlink, mstconfig, and cxray's own PCI path) open
/sys/bus/pci/devices/0000:03:00.0/config and talk to the emulator.
/sys/class/net and /sys/class/infiniband are emulated too, so the names
'cxray status' lists (-d mlx5_0, -d ens1f0np0) and the kernel backend
(-d kernel:mlx5_0) work, and each function's command interface is served
as /dev/fwctl/fwctlN (as mlx5_fwctl offers it). A scenario device with
lockdown: true refuses config-space writes for every process, as a
locked-down kernel does. The devices are the same kept devices as -d emu on
the same profile or scenario ('cxray emu status'). Everything
is torn down when CMD exits or on a signal; the exit status is CMD's.
Needs root (mount namespaces) and /dev/fuse.`,
		Example: `  cxray emu run -- mstflint -d 0000:03:00.0 q
  cxray emu run --scenario examples/two-adapters.yaml -- cxray status
  cxray emu run -- sh -c 'cxray reg set PAOS admin_status=up_once ase=1 -d 03:00.0 --yes; mstreg -d 03:00.0 --reg_name PAOS --get --indexes local_port=1,lp_msb=0,swid=0'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runEmuRun(a.Ctx, &o, args)
		},
	}
	c.Flags().StringVar(&o.scenarioFile, "scenario", "", "scenario file (YAML) describing the emulated adapters")
	c.Flags().StringVar(&o.profile, "profile", "", "one adapter of this profile ("+strings.Join(scenario.Profiles(), ", ")+")")
	commandAfterFlags(c)
	return c
}

// runEmuRun runs the command args in a namespace serving the emulated
// devices (runInNamespace); the exit status is the command's.
func (a *app) runEmuRun(_ context.Context, o *emuRunOptions, args []string) error {
	name, err := emuName(o.scenarioFile, o.profile)
	if err != nil {
		return err
	}
	return a.runInNamespace(runPayload{Name: name}, args)
}

// commandAfterFlags makes the first argument that is not a flag of c the
// start of the command to run, so 'emu run mstflint -d X q' keeps -d for
// mstflint as 'emu run -- mstflint -d X q' does; a flag c does not know
// before the command is answered with where the command goes.
func commandAfterFlags(c *cobra.Command) {
	c.Flags().SetInterspersed(false)
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return cmdutil.UsageErr("%v; the command to run and its flags go after '--': cxray %s -- mstflint -d 0000:03:00.0 q", err, c.CommandPath()[len("cxray "):])
	})
}

// emuName turns --scenario/--profile into an emulator name, checking it
// early so a bad name gets the scenario's own message.
func emuName(scenarioFile, profile string) (string, error) {
	if scenarioFile != "" && profile != "" {
		return "", cmdutil.UsageErr("give --scenario or --profile, not both")
	}
	name := "emu"
	switch {
	case scenarioFile != "":
		// Absolute: the namespace helper, and the state's key, do not
		// depend on the working directory.
		abs, err := filepath.Abs(scenarioFile)
		if err != nil {
			return "", cmdutil.UsageWrap(err)
		}
		name = "emu:" + abs
	case profile != "":
		name = "emu:" + profile
	}
	if _, err := scenario.ResolveScenario(name); err != nil {
		return "", cmdutil.UsageWrap(err)
	}
	return name, nil
}

// runInNamespace runs argv with the emulated devices of p as its sysfs and
// returns its exit status.
func (a *app) runInNamespace(p runPayload, args []string) error {
	payload, _ := json.Marshal(p)
	var exe string
	// Where namespaces cannot work, Run says why; the helper is looked for
	// only where it can run.
	if a.NamespaceHelper != nil && nsrun.Check() == nil {
		var err error
		if exe, err = a.NamespaceHelper(); err != nil {
			return err
		}
	}
	code, err := nsrun.Run(context.Background(), nsrun.Spec{Payload: payload, Exe: exe}, args, a.Stdin, a.Stdout, a.Stderr)
	if err != nil && code < 0 {
		switch {
		case errors.Is(err, nsrun.ErrCommandNotFound):
			return &cmdutil.ExitError{Code: ExitNotFound, Err: err} // as a shell says it
		case errors.Is(err, nsrun.ErrCommandNotExecutable):
			return &cmdutil.ExitError{Code: ExitNotExecutable, Err: err}
		case errors.Is(err, nsrun.ErrNotRoot), errors.Is(err, nsrun.ErrNoFUSE), errors.Is(err, nsrun.ErrNoNamespace):
			return cmdutil.DeviceErr(err)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return cmdutil.DeviceErr(err)
		}
	}
	if code != 0 {
		return &cmdutil.ExitError{Code: code, Err: cmdutil.ErrQuiet}
	}
	return nil
}

// emuProfilesOptions are the options of the verb: it has no flags of its own
// (the output mode is global).
type emuProfilesOptions struct{}

func (a *app) emuProfilesCmd() *cobra.Command { return a.newEmuProfilesCmd(nil) }

// newEmuProfilesCmd wires the command; runF (tests) replaces runEmuProfiles.
func (a *app) newEmuProfilesCmd(runF func(*emuProfilesOptions, []string) error) *cobra.Command {
	var o emuProfilesOptions
	c := &cobra.Command{
		Use:   "profiles",
		Short: "List the emulator's adapter profiles",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runEmuProfiles(a.Ctx, &o)
		},
	}
	return c
}

// runEmuProfiles is the work of the "profiles" command, apart from its cobra wiring.
func (a *app) runEmuProfiles(ctx context.Context, _ *emuProfilesOptions) error {
	type prof struct {
		Name     string `json:"name"`
		Summary  string `json:"summary"`
		Firmware string `json:"firmware"`
		PSID     string `json:"psid"`
		Ports    int    `json:"ports"`
	}
	var out []prof
	for _, n := range scenario.Profiles() {
		p, err := scenario.LookupProfile(n)
		if err != nil {
			return err
		}
		out = append(out, prof{n, p.Summary, p.Spec.FW.String(), p.Spec.PSID, len(p.Spec.Ports)})
	}
	if a.JSON() {
		return a.WriteJSON(struct {
			Profiles []prof `json:"profiles"`
		}{out})
	}
	t := a.NewTable("PROFILE", "FIRMWARE", "PSID", "PORTS", "SUMMARY")
	for _, p := range out {
		t.Row(p.Name, p.Firmware, p.PSID, fmt.Sprint(p.Ports), p.Summary)
	}
	t.Flush()
	return nil
}

// runPayload is what the namespace helper gets: the emulator name (emu,
// emu:PROFILE, emu:FILE.yaml) and, for `emu serve`, the control socket.
type runPayload struct {
	Name   string `json:"name"`
	Socket string `json:"socket,omitempty"`
}

// NamespaceDevices builds the devices of `cxray emu run` and `serve` inside
// the namespace helper (cxray-emu: cli/emud), and starts the control socket
// when one is asked for.
func NamespaceDevices(payload []byte) ([]sysfs.DeviceEntry, error) {
	var p runPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, fmt.Errorf("bad emulator request: %w", err)
	}
	// The same kept state as -d emu on this scenario; released when the
	// helper ends.
	var (
		e  *scenario.Emulation
		st *state.State
	)
	if emuadapter.KeepsState() {
		var err error
		if st, err = emuadapter.OpenState(p.Name, scenario.Options{}); err != nil {
			return nil, err
		}
		nsrun.AtExit(func() { st.Close() })
		e = st.Emulation()
	} else {
		var err error
		if e, err = scenario.Resolve(p.Name, scenario.Options{}); err != nil {
			return nil, err
		}
	}
	if p.Socket != "" {
		var (
			srv *ctl.Server
			err error
		)
		if st != nil {
			srv, err = ctl.ListenState(p.Socket, st)
		} else {
			srv, err = ctl.Listen(p.Socket, e)
		}
		if err != nil {
			return nil, err
		}
		// The socket goes on every exit of the helper: the command ended
		// (a signal to emu serve is passed on to it), or setup failed.
		nsrun.AtExit(func() { srv.Close() })
		go srv.Serve()
		fmt.Fprintln(os.Stderr, serveBanner(len(e.Functions()), p.Socket, os.Getpid(), st))
	}
	var do func(func() error) error
	if st != nil {
		do = st.Do
	}
	return emuadapter.SysfsEntries(e, do), nil
}

// serveBanner is what `emu serve` prints once its devices are up: every
// path absolute and the join line keeping the joining shell's directory
// (entering a mount namespace otherwise leaves it at /), so both work when
// pasted in any shell, in any directory.
func serveBanner(funcs int, socket string, pid int, st *state.State) string {
	kept := "keeps no state"
	if st != nil {
		kept = "state: " + st.Path()
	}
	return fmt.Sprintf("cxray emu serve: %d emulated functions (%s)\n"+
		"  control:   cxray emu ctl --socket %s status\n"+
		"  join from another shell: nsenter --mount=/proc/%d/ns/mnt --wd=\"$PWD\" -- \"${SHELL:-/bin/sh}\"",
		funcs, kept, socket, pid)
}

// Exit codes of emu run and emu serve for a command that could not be
// started, as POSIX shells give them (2.8.2): 127 not found, 126 found but
// not executable.
const (
	ExitNotFound      = 127
	ExitNotExecutable = 126
)
