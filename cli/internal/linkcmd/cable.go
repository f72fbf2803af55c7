package linkcmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/linkctl"
	"github.com/cxray/cxray/feature/modules"
	"github.com/cxray/cxray/optics"
)

// cableOptions are mlxlink's --cable flags: read the module's memory.
type cableOptions struct {
	cable, dump, read  bool
	page, bank, offset int
	length             int
	write              string
	data               []byte // --write parsed
}

func addCableFlags(c *cobra.Command, o *cableOptions) {
	c.Flags().BoolVar(&o.cable, "cable", false, "the port's module memory (MCIA): with --dump or --read")
	c.Flags().BoolVar(&o.dump, "dump", false, "with --cable: hex dump of every page the module's standard defines")
	c.Flags().BoolVar(&o.read, "read", false, "with --cable: read --length bytes of --page (and --bank) from --offset")
	c.Flags().IntVar(&o.page, "page", 0, "with --cable --read: the page (0..255)")
	c.Flags().IntVar(&o.bank, "bank", 0, "with --cable --read: the bank (CMIS banked pages, 0..255)")
	c.Flags().IntVar(&o.offset, "offset", 0, "with --cable --read: the first byte (0..255; 128..255 are the page's own, 0..127 the lower page every page shares)")
	c.Flags().IntVar(&o.length, "length", 16, "with --cable --read: how many bytes (to byte 255 at most)")
	c.Flags().StringVar(&o.write, "write", "", "with --cable, --page, --offset (and --bank): write these bytes (comma-separated: 0x0f,0,1) into the module's host-writable controls (docs/link.md lists them), with --yes; read back, undo record kept")
}

func checkCableFlags(cmd *cobra.Command, o *cableOptions) error {
	for _, f := range []string{"all", "counters", "interval", "clear", "pcie"} {
		if changed(cmd, f) {
			return cmdutil.UsageErr("--%s is not for --cable: run them apart", f)
		}
	}
	switch {
	case !o.cable:
		return cmdutil.UsageErr("--dump, --read, --write, --page, --bank, --offset and --length go with --cable")
	case changed(cmd, "write") && (o.dump || o.read || changed(cmd, "length")):
		return cmdutil.UsageErr("--cable --write writes the bytes it is given: leave out --dump, --read and --length")
	case changed(cmd, "write") && !changed(cmd, "offset"):
		return cmdutil.UsageErr("--cable --write needs --offset (and --page, --bank when not 0): where the bytes go")
	case !changed(cmd, "write") && changed(cmd, "dry-run", "force", "wait"):
		return cmdutil.UsageErr("--dry-run, --force and --wait go with a change (--cable --write); --dump and --read only read")
	case !changed(cmd, "write") && o.dump == o.read:
		return cmdutil.UsageErr("--cable: give --dump, --read or --write (one of them)")
	case o.dump && changed(cmd, "page", "bank", "offset", "length"):
		return cmdutil.UsageErr("--page, --bank, --offset and --length go with --read; --dump reads every page")
	case o.page < 0 || o.page > 255 || o.bank < 0 || o.bank > 255:
		return cmdutil.UsageErr("--page %d --bank %d: each is 0..255", o.page, o.bank)
	case o.offset < 0 || o.offset > 255:
		return cmdutil.UsageErr("--offset %d: give 0..255", o.offset)
	case o.length < 1 || o.offset+o.length > 256:
		return cmdutil.UsageErr("--length %d from --offset %d: give 1..%d bytes (a page ends at byte 255)", o.length, o.offset, 256-o.offset)
	}
	if changed(cmd, "write") {
		b, err := parseBytes(o.write)
		if err != nil {
			return cmdutil.UsageErr("--write %q: %v", o.write, err)
		}
		if len(b) > linkctl.MaxModuleWrite || o.offset+len(b) > 256 {
			return cmdutil.UsageErr("--write: %d bytes from --offset %d; give 1..%d bytes that end by byte 255", len(b), o.offset, linkctl.MaxModuleWrite)
		}
		o.data = b
	}
	return nil
}

// parseBytes reads mlxlink's --write list: bytes separated by commas
// (spaces allowed), decimal or 0x hex.
func parseBytes(s string) ([]byte, error) {
	var out []byte
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseUint(f, 0, 8)
		if err != nil {
			return nil, fmt.Errorf("%q is not a byte (give 0..255 or 0x00..0xff, separated by commas)", f)
		}
		out = append(out, byte(v))
	}
	return out, nil
}

func (a *app) runCable(o *linkOptions) error {
	co := &o.cableOpts
	if co.data != nil {
		return a.runChange(o)
	}
	db, err := a.DB()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(a.Ctx, o.df.Timeout)
	defer cancel()
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	if co.dump {
		return a.cableDump(ctx, ad, o.port)
	}

	return a.cableRead(ctx, ad, o.port, co)
}

func (a *app) cableDump(ctx context.Context, ad *adapter.Adapter, port int) error {
	r, err := ad.Module(ctx, port, adapter.ModuleOptions{Full: true})
	if err != nil {
		return cmdutil.Classify(err)
	}
	if r.Image == nil {
		why := "no module memory was read"
		if r.EEPROMErr != nil {
			why = r.EEPROMErr.Error()
		}
		return cmdutil.DeviceErr(fmt.Errorf("port %d: %s", port, why))
	}
	if a.JSON() {
		return a.WriteJSON(cableDumpDoc{Device: ad.Name(), Port: port, Module: r.Module, Access: r.Access, Image: r.Image})
	}
	fmt.Fprintf(a.Stdout, "Port %d, module %d\n", port, r.Module)
	modules.WriteRaw(a.Stdout, r.Image, r.Access)
	fmt.Fprintf(a.Stdout, "  Decoded: cxray module -d %s --port %d\n", ad.Name(), port)
	return nil
}

func (a *app) cableRead(ctx context.Context, ad *adapter.Adapter, port int, co *cableOptions) error {
	p, err := ad.Port(ctx, port)
	if err != nil {
		return cmdutil.Classify(err)
	}
	if !ad.HasRegisters() {
		return cmdutil.UsageErr("--cable --read reads through MCIA, the register path; -d kernel:NAME has none (use 'ethtool -m' or cxray module)")
	}
	d, err := ad.Registers(ctx)
	if err != nil {
		return cmdutil.Classify(err)
	}
	rd := &adapter.MCIAReader{Device: d, Module: p.Module}
	// The identifier says how --page maps to the module's memory (an
	// SFP's page 1 is its A2h map at I2C 0x51, optics.HostAddr).
	id, err := rd.ReadPage(ctx, optics.PageAddr{I2C: 0x50}, 1)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return cmdutil.Stopped(ctx, err)
		}
		return cmdutil.DeviceErr(fmt.Errorf("port %d module %d: reading its identifier: %w", port, p.Module, err))
	}
	addr, err := optics.HostAddr(optics.StandardOf(id[0]), co.page, co.bank, co.offset)
	if err != nil {
		return cmdutil.UsageErr("--page/--bank/--offset: %v", err)
	}
	b, err := rd.ReadPage(ctx, addr, co.length)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return cmdutil.Stopped(ctx, err)
		}
		return cmdutil.DeviceErr(fmt.Errorf("port %d module %d page %d bank %d offset %d: %w", port, p.Module, co.page, co.bank, co.offset, err))
	}
	if a.JSON() {
		hx := make([]string, len(b))
		for i, x := range b {
			hx[i] = fmt.Sprintf("0x%02x", x)
		}
		return a.WriteJSON(cableReadDoc{Device: ad.Name(), Port: port, Module: p.Module, I2C: int(addr.I2C),
			Page: co.page, Bank: co.bank, Offset: co.offset, Length: len(b), Bytes: hx, ASCII: printable(b)})
	}
	via := "MCIA"
	if addr.I2C != 0x50 {
		via = fmt.Sprintf("MCIA, I2C 0x%02x", addr.I2C)
	}
	fmt.Fprintf(a.Stdout, "Port %d, module %d: page %d, bank %d, bytes %d..%d (%s)\n", port, p.Module, co.page, co.bank, co.offset, co.offset+len(b)-1, via)
	for off := 0; off < len(b); off += 16 {
		end := min(off+16, len(b))
		var hx []string
		for _, x := range b[off:end] {
			hx = append(hx, fmt.Sprintf("%02x", x))
		}
		fmt.Fprintf(a.Stdout, "  0x%02x: %-47s  %s\n", co.offset+off, strings.Join(hx, " "), printable(b[off:end]))
	}
	return nil
}

// printable is the bytes as text, '.' for what is not printable ASCII.
func printable(b []byte) string {
	out := make([]byte, len(b))
	for i, x := range b {
		if x >= 0x20 && x < 0x7f {
			out[i] = x
		} else {
			out[i] = '.'
		}
	}
	return string(out)
}
