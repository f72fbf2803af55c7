package configcmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/policy"
	"github.com/cxray/cxray/nvconf"
)

// maxPolicyBytes bounds a policy file: a fleet's templates are kilobytes.
const maxPolicyBytes = 4 << 20

// checkOptions are the flags of `cxray config check`.
type checkOptions struct {
	df     cmdutil.DeviceFlags
	all    bool
	policy string
}

// checkJSON is one device's result.
// checkDoc is `config check -o json`: each device's report and the
// policy's own notes.
type checkDoc struct {
	Devices    []checkJSON `json:"devices"`
	Notes      []string    `json:"notes"`
	Policy     string      `json:"policy"`
	Violations int         `json:"violations"`
}

type checkJSON struct {
	Device     string           `json:"device"`
	BDF        string           `json:"bdf,omitempty"`
	Applied    bool             `json:"applied"`
	Violations int              `json:"violations"`
	Findings   []policy.Finding `json:"findings"`
	Error      string           `json:"error,omitempty"`
}

func (cc *configCtx) checkCmd() *cobra.Command { return cc.newCheckCmd(nil) }

// newCheckCmd wires the flags to checkOptions; runF (tests) replaces runCheck.
func (cc *configCtx) newCheckCmd(runF func(*checkOptions, []string) error) *cobra.Command {
	o := &checkOptions{}
	c := &cobra.Command{
		Use:   "check --policy FILE (-d DEV | --all)",
		Short: "Check adapters against a fleet policy: NV values, firmware minimum, link speed, PCIe",
		Long: `Compare each adapter with a policy file: cxray's own (kind: CxrayPolicy) or
NVIDIA's NicConfigurationTemplate, whose numVfs, linkType, roceOptimized,
gpuDirectOptimized and rawNvConfig are read as the NV values they set. An NV
value must hold both for Next Boot and Current (one that only waits for a
firmware reset is reported as such). An expectation the backend cannot read
is listed as unchecked, never as a violation. docs/config.md, "Policy",
describes the file.

Exit codes: 0 every device complies, 1 a device departs from the policy,
2 a bad policy file, 3 a device could not be read.`,
		Example: `  cxray config check --policy fleet.yaml -d 0000:03:00.0
  cxray config check --policy nic-template.yaml --all -o json
  cxray config check --policy examples/policy.yaml -d emu:examples/fleet-16.yaml --all`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return cc.runCheck(cc.a.Ctx, o)
		},
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.all, "all", false, "every ConnectX function of the machine (or of the scenario -d emu:FILE.yaml names)")
	c.Flags().StringVar(&o.policy, "policy", "", "policy file (YAML; '-': standard input)")
	return c
}

func (cc *configCtx) runCheck(ctx context.Context, o *checkOptions) error {
	if o.policy == "" {
		return cmdutil.UsageErr("add --policy FILE (see docs/config.md, \"Policy\")")
	}
	data, err := cmdutil.ReadInput(o.policy, cc.a.Stdin, maxPolicyBytes, "a policy file")
	if err != nil {
		return err
	}
	set, err := policy.Parse(o.policy, data)
	if err != nil {
		return cmdutil.UsageErr("--policy: %v", err)
	}
	nv, err := cc.db()
	if err != nil {
		return err
	}
	db, err := cc.a.DB()
	if err != nil {
		return err
	}
	// The functions are checked side by side, each within its own
	// --timeout; one that could not be read is its own error line.
	octx, cancel := o.df.Context(ctx)
	ads, err := cc.a.OpenTargets(octx, o.df.Name, o.all, db)
	cancel()
	if err != nil {
		return err
	}
	defer adapter.CloseAll(ads)
	out := make([]checkJSON, len(ads))
	cmdutil.EachTarget(ctx, ads, o.df.Timeout, func(ctx context.Context, i int, ad *adapter.Adapter) {
		out[i] = checkDevice(ctx, ad, nv, set)
	})
	if err := ctx.Err(); err != nil {
		return cmdutil.Stopped(ctx, err)
	}
	failed, violations := 0, 0
	for _, r := range out {
		if r.Error != "" {
			failed++
		}
		violations += r.Violations
	}
	if cc.a.JSON() {
		var notes []string
		for _, p := range set.Policies {
			notes = append(notes, p.Notes...)
		}
		if err := cc.a.WriteJSON(checkDoc{Policy: o.policy, Devices: out, Violations: violations, Notes: cmdutil.NonNil(notes)}); err != nil {
			return err
		}
	} else {
		cc.printCheck(set, out)
	}
	switch {
	case failed > 0:
		return &cmdutil.ExitError{Code: cmdutil.ExitDevice, Err: cmdutil.ErrQuiet}
	case violations > 0:
		return cmdutil.ErrProblem
	}
	return nil
}

// checkDevice reads what the policy looks at and checks it. An NV
// configuration the backend cannot read leaves the NV checks unchecked;
// one that fails to read is the device's error.
func checkDevice(ctx context.Context, ad *adapter.Adapter, nv *nvconf.DB, set *policy.Set) checkJSON {
	r := checkJSON{Device: ad.Name(), BDF: ad.BDF(), Findings: []policy.Finding{}}
	f := policy.Facts{BDF: ad.BDF()}
	id, err := ad.Identity(ctx)
	if id == nil {
		r.Error = fmt.Sprintf("identity: %v", err)
		return r
	}
	f.Identity = id
	f.Links, f.LinksErr = ad.Links(ctx)
	if f.LinksErr != nil && !errors.Is(f.LinksErr, adapter.ErrUnsupported) {
		r.Error = fmt.Sprintf("links: %v", f.LinksErr)
	}
	if d, err := ad.Registers(ctx); err != nil {
		f.NVErr = err
		if !errors.Is(err, adapter.ErrUnsupported) {
			r.Error = fmt.Sprintf("NV configuration: %v", err)
		}
	} else if s, err := nvconf.Open(ctx, d, nv); err != nil {
		f.NVErr, r.Error = err, fmt.Sprintf("NV configuration: %v", err)
	} else if res, err := s.Query(ctx, nvconf.QueryOptions{Extended: true}); err != nil {
		f.NVErr, r.Error = err, fmt.Sprintf("NV configuration: %v", err)
	} else {
		f.NV = res.Settings
	}
	// PCIe: every source the backend has; what fails to read leaves the
	// PCIe checks unchecked (the link is not this command's to diagnose:
	// cxray link --pcie is).
	if p, err := ad.PCIe(ctx); err == nil || p != nil {
		f.PCIe = policy.PCIeOf(p)
	}
	fs, applied := set.Check(f)
	r.Applied = applied
	if fs != nil {
		r.Findings = fs
	}
	for _, n := range policy.Violations(fs) {
		r.Violations += n
	}
	return r
}

func (cc *configCtx) printCheck(set *policy.Set, out []checkJSON) {
	t := cc.a.NewTable("DEVICE", "CHECK", "ITEM", "WANT", "GOT", "RESULT")
	for _, r := range out {
		name := r.Device
		if r.BDF != "" && r.BDF != r.Device {
			name += " (" + r.BDF + ")"
		}
		if r.Error != "" {
			t.Row(name, "-", "-", "-", "-", "error: "+r.Error)
		}
		if !r.Applied && r.Error == "" {
			t.Row(name, "-", "-", "-", "-", "no policy selects this device")
			continue
		}
		for _, f := range r.Findings {
			res := "ok"
			switch {
			case f.Violation:
				res = "VIOLATION"
			case f.Unchecked:
				res = "unchecked"
			}
			if f.Note != "" {
				res += ": " + f.Note
			}
			t.Row(name, f.Check, f.Item, cmdutil.Dash(f.Want), cmdutil.Dash(f.Got), res)
		}
	}
	t.Flush()
	for _, p := range set.Policies {
		for _, n := range p.Notes {
			fmt.Fprintf(cc.a.Stdout, "note: %s: %s\n", p.Name, n)
		}
	}
	devices, bad := len(out), 0
	for _, r := range out {
		if r.Violations > 0 {
			bad++
		}
	}
	fmt.Fprintf(cc.a.Stdout, "%d of %d device(s) depart from the policy\n", bad, devices)
}
