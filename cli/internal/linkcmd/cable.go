package linkcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/modules"
	"github.com/cxray/cxray/optics"
)

// cableOptions are mlxlink's --cable flags: read the module's memory.
type cableOptions struct {
	cable, dump, read  bool
	page, bank, offset int
	length             int
}

func addCableFlags(c *cobra.Command, o *cableOptions) {
	c.Flags().BoolVar(&o.cable, "cable", false, "the port's module memory (MCIA): with --dump or --read")
	c.Flags().BoolVar(&o.dump, "dump", false, "with --cable: hex dump of every page the module's standard defines")
	c.Flags().BoolVar(&o.read, "read", false, "with --cable: read --length bytes of --page (and --bank) from --offset")
	c.Flags().IntVar(&o.page, "page", 0, "with --cable --read: the page (0..255)")
	c.Flags().IntVar(&o.bank, "bank", 0, "with --cable --read: the bank (CMIS banked pages, 0..255)")
	c.Flags().IntVar(&o.offset, "offset", 0, "with --cable --read: the first byte (0..255; 128..255 are the page's own, 0..127 the lower page every page shares)")
	c.Flags().IntVar(&o.length, "length", 16, "with --cable --read: how many bytes (to byte 255 at most)")
}

func checkCableFlags(cmd *cobra.Command, o *cableOptions) error {
	for _, f := range []string{"all", "counters", "interval", "clear", "pcie"} {
		if changed(cmd, f) {
			return cmdutil.UsageErr("--%s is not for --cable: run them apart", f)
		}
	}
	switch {
	case !o.cable:
		return cmdutil.UsageErr("--dump, --read, --page, --bank, --offset and --length go with --cable")
	case o.dump == o.read:
		return cmdutil.UsageErr("--cable: give --dump or --read (one of them)")
	case o.dump && changed(cmd, "page", "bank", "offset", "length"):
		return cmdutil.UsageErr("--page, --bank, --offset and --length go with --read; --dump reads every page")
	case o.page < 0 || o.page > 255 || o.bank < 0 || o.bank > 255:
		return cmdutil.UsageErr("--page %d --bank %d: each is 0..255", o.page, o.bank)
	case o.offset < 0 || o.offset > 255:
		return cmdutil.UsageErr("--offset %d: give 0..255", o.offset)
	case o.length < 1 || o.offset+o.length > 256:
		return cmdutil.UsageErr("--length %d from --offset %d: give 1..%d bytes (a page ends at byte 255)", o.length, o.offset, 256-o.offset)
	}
	return nil
}

func (a *app) runCable(o *linkOptions) error {
	co := &o.cableOpts
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
		return a.WriteJSON(map[string]any{"device": ad.Name(), "port": port, "module": r.Module, "access": r.Access, "image": r.Image})
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
	addr := optics.PageAddr{I2C: 0x50, Bank: uint8(co.bank), Page: uint8(co.page), Offset: uint8(co.offset)}
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
		return a.WriteJSON(map[string]any{"device": ad.Name(), "port": port, "module": p.Module, "i2c": 0x50,
			"page": co.page, "bank": co.bank, "offset": co.offset, "length": len(b), "bytes": hx, "ascii": printable(b)})
	}
	fmt.Fprintf(a.Stdout, "Port %d, module %d: page %d, bank %d, bytes %d..%d (MCIA)\n", port, p.Module, co.page, co.bank, co.offset, co.offset+len(b)-1)
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
