package emucmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/emu/state"
)

// emuStatusOptions are the options of the verb: it has no flags of its own
// (the output mode is global).
type emuStatusOptions struct{}

func (a *app) emuStatusCmd() *cobra.Command { return a.newEmuStatusCmd(nil) }

// newEmuStatusCmd wires the command; runF (tests) replaces runEmuStatus.
func (a *app) newEmuStatusCmd(runF func(*emuStatusOptions, []string) error) *cobra.Command {
	var o emuStatusOptions
	c := &cobra.Command{
		Use:   "status",
		Short: "List the emulator states kept between commands",
		Long: `List the states the emulated devices keep between commands: one per profile
or scenario file, with the number of changes recorded (register writes, NV
writes, resets, module plugs), the emulated clock, and whether a process (an
'emu serve', 'emu run' or a command) has it open. A scenario file's state is
stale once the file changes: the new content starts a state of its own.`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runEmuStatus(a.Ctx, &o)
		},
	}
	return c
}

// runEmuStatus is the work of the "emuStatus" command, apart from its cobra wiring.
func (a *app) runEmuStatus(ctx context.Context, _ *emuStatusOptions) error {
	dir, err := state.Dir()
	if err != nil {
		return cmdutil.DeviceErr(err)
	}
	var infos []state.Info
	if dir != "" {
		if infos, err = state.List(dir); err != nil {
			return cmdutil.DeviceErr(err)
		}
	}
	if infos == nil {
		infos = []state.Info{}
	}
	if a.JSON() {
		return a.WriteJSON(statesDocument{Dir: dir, KeepsState: dir != "", States: infos})
	}
	if dir == "" {
		fmt.Fprintf(a.Stdout, "The emulator keeps no state (%s=%s): every command powers on a fresh one.\n", state.EnvDir, state.Off)
		return nil
	}
	fmt.Fprintf(a.Stdout, "Emulator states in %s\n", dir)
	if len(infos) == 0 {
		fmt.Fprintln(a.Stdout, "None yet: the first command on -d emu (or emu run/serve) makes one.")
		return nil
	}
	now := time.Now()
	t := a.NewTable("SCENARIO", "CHANGES", "CLOCK", "LAST CHANGE", "NOTE")
	for _, in := range infos {
		var notes []string
		if in.InUse {
			notes = append(notes, "in use")
		}
		if in.Stale != "" {
			notes = append(notes, "stale: "+in.Stale)
		}
		if in.Problem != "" {
			notes = append(notes, "unreadable: "+in.Problem)
		}
		clk := "-"
		if !in.Clock.IsZero() {
			clk = in.Clock.UTC().Format(time.RFC3339)
			if in.Manual {
				clk += " (manual)"
			}
		}
		t.Row(cmdutil.Dash(in.Name), fmt.Sprint(in.Records), clk, age(now, in.Modified)+" ago", cmdutil.Dash(strings.Join(notes, "; ")))
	}
	t.Flush()
	return nil
}

// age is a duration for people: 3s, 5m, 2h, 4d.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// emuResetOptions are the options of the verb: it has no flags of its own
// (the output mode is global).
type emuResetOptions struct{}

func (a *app) emuResetCmd() *cobra.Command { return a.newEmuResetCmd(nil) }

// newEmuResetCmd wires the command; runF (tests) replaces runEmuReset.
func (a *app) newEmuResetCmd(runF func(*emuResetOptions, []string) error) *cobra.Command {
	var o emuResetOptions
	c := &cobra.Command{
		Use:   "reset [PROFILE | FILE.yaml]",
		Short: "Forget what the emulated devices kept: the next command powers on fresh ones",
		Long: `Forget the state the emulated devices kept between commands, for one profile
or scenario file (every state the file had), or with no argument for all of
them: the next command on -d emu powers on a device as the profile or
scenario describes it. A state in use by a running 'emu serve' or 'emu run'
(or a command) is left alone; stop it first.`,
		Example: `  cxray emu reset
  cxray emu reset cx6dx-2p100g
  cxray emu reset examples/two-adapters.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runEmuReset(a.Ctx, &o, args)
		},
	}
	return c
}

// runEmuReset is the work of the "reset" command, apart from its cobra wiring.
func (a *app) runEmuReset(ctx context.Context, _ *emuResetOptions, args []string) error {
	dir, err := state.Dir()
	if err != nil {
		return cmdutil.DeviceErr(err)
	}
	name := ""
	if len(args) == 1 {
		name = "emu:" + args[0]
		if args[0] == "emu" || strings.HasPrefix(args[0], "emu:") {
			name = args[0]
		}
		if _, _, err := scenario.Locate(name); err != nil {
			return cmdutil.UsageWrap(err)
		}
	}
	var removed []string
	switch {
	case dir == "":
		if !a.JSON() {
			fmt.Fprintf(a.Stdout, "The emulator keeps no state (%s=%s): nothing to reset.\n", state.EnvDir, state.Off)
		}
	default:
		removed, err = state.Remove(dir, name)
	}
	if removed == nil {
		removed = []string{}
	}
	if a.JSON() {
		if jerr := a.WriteJSON(struct {
			Removed []string `json:"removed"`
		}{removed}); jerr != nil {
			return jerr
		}
	} else {
		for _, p := range removed {
			fmt.Fprintf(a.Stdout, "Removed %s\n", p)
		}
		if len(removed) == 0 && err == nil && dir != "" {
			fmt.Fprintln(a.Stdout, "No kept state to reset.")
		}
	}
	if err != nil {
		return cmdutil.DeviceErr(err)
	}
	return nil
}

// statesDocument is `cxray emu status -o json`: where the emulator keeps
// its state, and the states kept. The fields are in key order, as the
// map it replaced was written, so the output is unchanged.
type statesDocument struct {
	Dir        string       `json:"dir"`
	KeepsState bool         `json:"keeps_state"`
	States     []state.Info `json:"states"`
}
