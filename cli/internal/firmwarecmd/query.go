package firmwarecmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/firmware"
	"github.com/cxray/cxray/internal/fwimage"
)

type queryOptions struct {
	df   cmdutil.DeviceFlags
	file string
}

func (a *app) queryCmd() *cobra.Command { return a.newQueryCmd(nil) }

// newQueryCmd wires the flags to queryOptions; runF (tests) replaces runQuery.
func (a *app) newQueryCmd(runF func(*queryOptions, []string) error) *cobra.Command {
	var o queryOptions
	c := &cobra.Command{
		Use:   "query [FILE | -d DEV]",
		Short: "What an image file or MFA2 package holds, or what an adapter runs and has stored",
		Long: `With FILE: a firmware image (.bin, FS4 layout) as 'flint -i FILE query' shows it
(version, release date, PSID, part number, supported hardware, GUIDs and MACs,
security attributes, sections), or an MFA2 package (the PSIDs and versions it
carries). Every CRC is checked: a cut or damaged file is refused (exit 2).

With -d DEV: the running firmware (MGIR), the image stored in flash (MCQI of
the boot image, which runs after the next firmware reset), the pending version
when they differ, the components (MCQS) and the update state machine (MCC).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			if len(args) == 1 {
				o.file = args[0]
			}
			return a.runQuery(a.Ctx, &o)
		},
	}
	o.df.Add(c)
	return c
}

func (a *app) runQuery(ctx context.Context, o *queryOptions) error {
	switch {
	case o.file != "" && o.df.Name != "":
		return cmdutil.UsageErr("give FILE or -d DEV, not both ('cxray fw update -d DEV FILE' installs a file)")
	case o.file == "" && o.df.Name == "":
		return cmdutil.UsageErr("give an image file (cxray fw query FILE) or a device (cxray fw query -d DEV)")
	case o.file != "":
		return a.queryFile(o.file)
	}
	return a.queryDevice(o)
}

func readFile(a *app, path string) (*firmware.File, error) {
	b, err := cmdutil.ReadInput(path, a.Stdin, firmware.MaxFileSize, "a firmware image")
	if err != nil {
		return nil, err
	}
	f, err := firmware.ReadFile(path, b)
	if err != nil {
		return nil, cmdutil.UsageWrap(err)
	}
	return f, nil
}

func (a *app) queryFile(path string) error {
	f, err := readFile(a, path)
	if err != nil {
		return err
	}
	if a.JSON() {
		return a.WriteJSON(f)
	}
	w := a.Stdout
	if p := f.Package; p != nil {
		fmt.Fprintf(w, "Package type:          MFA2\n")
		if p.Version != "" {
			fmt.Fprintf(w, "Package version:       %s\n", p.Version)
		}
		fmt.Fprintf(w, "Size:                  %d bytes\n", p.Size)
		fmt.Fprintf(w, "SHA-256:               %s\n", p.SHA256)
		t := a.NewTable("PSID", "VERSIONS")
		for _, b := range p.Boards {
			t.Row(b.PSID, strings.Join(b.Versions, ", "))
		}
		t.Flush()
		return nil
	}
	im := f.Image
	row := func(k, v string) { fmt.Fprintf(w, "%-22s %s\n", k+":", cmdutil.Dash(v)) }
	row("Image type", im.Format)
	row("FW Version", im.Version)
	row("FW Release Date", im.ReleaseDate)
	row("Product Version", im.ProductVersion)
	row("PSID", im.PSID)
	if im.OrigPSID != "" && im.OrigPSID != im.PSID {
		row("Orig PSID", im.OrigPSID)
	}
	row("Part Number", im.PartNumber)
	row("Description", im.Description)
	ids := make([]string, len(im.HWIDs))
	for i, h := range im.HWIDs {
		ids[i] = fmt.Sprintf("0x%x", h)
	}
	row("Supported HW IDs", strings.Join(ids, ", "))
	row("Base GUID", guidCount(im.BaseGUID, im.GUIDs))
	row("Base MAC", guidCount(im.BaseMAC, im.MACs))
	row("Image VSD", im.ImageVSD)
	row("Device VSD", im.DeviceVSD)
	row("Signed", signed(im))
	fmt.Fprintf(w, "%-22s %d\n", "Security Ver:", im.SecurityVersion)
	row("Size", fmt.Sprintf("%d bytes", im.Size))
	row("SHA-256", im.SHA256)
	var secs []string
	for _, s := range im.Sections {
		secs = append(secs, s.Name)
	}
	row("Sections", strings.Join(secs, ", "))
	return nil
}

func guidCount(v string, n int) string {
	if v == "" {
		return ""
	}
	return fmt.Sprintf("%s (%d)", v, n)
}

// signed says whether the image carries a signature section, and which.
func signed(im *firmware.ImageInfo) string {
	for _, s := range im.Sections {
		if s.Type == fwimage.SectionSignature {
			return "yes (" + s.Name + ")"
		}
	}
	return "no"
}

func (a *app) queryDevice(o *queryOptions) error {
	ctx, cancel := o.df.Context(a.Ctx)
	defer cancel()
	db, err := a.DB()
	if err != nil {
		return err
	}
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	info, err := firmware.Query(ctx, ad)
	if err != nil {
		if ctx.Err() != nil {
			return cmdutil.Stopped(ctx, err)
		}
		return cmdutil.Classify(err)
	}
	if a.JSON() {
		return a.WriteJSON(info)
	}
	w := a.Stdout
	row := func(k, v string) { fmt.Fprintf(w, "%-16s %s\n", k+":", cmdutil.Dash(v)) }
	ver := func(v *firmware.Version) string {
		if v == nil {
			return ""
		}
		if v.Built != "" {
			return v.Version + " (built " + v.Built + ")"
		}
		return v.Version
	}
	row("Device", info.Device)
	row("PSID", info.PSID)
	row("Running", ver(&info.Running))
	row("Stored", ver(info.Stored))
	if info.Pending != nil {
		row("Pending", ver(info.Pending)+"; runs after a firmware reset ('cxray fw reset -d "+info.Device+"')")
	}
	state := info.UpdateState
	if info.UpdateOwner != "" {
		state += " (held by " + info.UpdateOwner + ")"
	}
	row("Update state", state)
	if rs := info.Resets; rs != nil {
		switch {
		case rs.FullChip != nil:
			row("Resets", strings.Join(rs.FullChip, ", ")+" (MROQ, full chip; 'cxray fw reset --query' lists every type)")
		default:
			row("Resets", strings.Join(rs.Levels, ", ")+" (MFRL; MROQ unavailable: "+rs.MROQCategory+" finding: "+rs.MROQUnavailable+")")
		}
	}
	if len(info.Components) > 0 {
		fmt.Fprintln(w)
		t := a.NewTable("INDEX", "COMPONENT", "STATUS", "UPDATE STATE")
		for _, c := range info.Components {
			t.Row(fmt.Sprint(c.Index), c.Identifier, c.Status, c.UpdateState)
		}
		t.Flush()
	}
	for _, n := range info.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}
