package kernel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mdlayher/genetlink"

	"github.com/cxray/cxray/internal/linuxabi"
	"github.com/cxray/cxray/optics"
)

// The module path of the kernel backend: optics decides which pages a
// module needs (optics.ReadImage) and decodes them (optics.Decode); this
// file only carries the reads over ethtool netlink. One page policy for
// every access path (MCIA, the emulator, the kernel) keeps their decodes
// comparable.

// ModuleReader reads one interface's module memory through ethtool
// netlink over a single connection; it is an optics.PageReader. It is not
// safe for concurrent use. Close it when done.
type ModuleReader struct {
	netdev string
	c      *genetlink.Conn
	fam    genetlink.Family
}

var _ optics.PageReader = (*ModuleReader)(nil)

// OpenModuleReader connects to ethtool netlink for netdev's module ("" is
// the function's first interface). Reads need CAP_NET_ADMIN; the first
// ReadPage says so plainly when it is missing.
func (d *Device) OpenModuleReader(ctx context.Context, netdev string) (*ModuleReader, error) {
	if netdev == "" {
		nds, err := listDirs(d.pciDir + "/net")
		if err != nil || len(nds) == 0 {
			return nil, fmt.Errorf("kernel: %s has no network interface, and module EEPROM is read through one (ethtool); is mlx5_core's Ethernet or IPoIB side up?", d.BDF)
		}
		netdev = nds[0]
	}
	if err := checkIfname(netdev); err != nil {
		return nil, err
	}
	c, fam, unbind, err := d.genl(ctx, linuxabi.ETHTOOL_GENL_NAME)
	if err != nil {
		return nil, err
	}
	// Only the family lookup was bound to ctx; each read binds its own.
	unbind()
	_ = c.SetDeadline(time.Time{})
	return &ModuleReader{netdev: netdev, c: c, fam: fam}, nil
}

// Netdev is the interface the reader reads through.
func (r *ModuleReader) Netdev() string { return r.netdev }

// ReadPage reads length bytes at a (optics.PageReader).
func (r *ModuleReader) ReadPage(ctx context.Context, a optics.PageAddr, length int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	if length < 0 || length > 0xffff {
		return nil, &RequestError{fmt.Sprintf("length %d: read 1 to 128 bytes at a time", length)}
	}
	req := PageRequest{I2CAddress: a.I2C, Bank: a.Bank, Page: a.Page, Offset: uint16(a.Offset), Length: uint16(length)}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	_ = r.c.SetDeadline(time.Time{})
	stop := bindContext(ctx, r.c.SetDeadline)
	defer stop()
	return readPage(ctx, r.c, r.fam, r.netdev, "module EEPROM of "+r.netdev, req)
}

// Close releases the connection.
func (r *ModuleReader) Close() error { return r.c.Close() }

// ModuleReading is one interface's module: the raw pages read (with the
// pages that failed) and their decode.
type ModuleReading struct {
	Netdev string        `json:"netdev"`
	Image  *optics.Image `json:"image"`
	// Module is the decode; nil when Error says the memory is unusable.
	Module *optics.Module `json:"module,omitempty"`
	// Error says why the memory gave no usable decode ("" when it did).
	Error string `json:"error,omitempty"`
	// ErrorKind is the optics.DecodeError kind (all_zeros, all_ones, ...).
	ErrorKind string `json:"error_kind,omitempty"`
}

// Module reads and decodes the module of netdev ("" is the function's
// first interface). The error is set only when nothing could be read
// (no CAP_NET_ADMIN: *PermissionError; no module: the adapter's answer;
// the context); a memory that reads but does not decode is described in
// ModuleReading.Error.
func (d *Device) Module(ctx context.Context, netdev string) (*ModuleReading, error) {
	return d.ReadModule(ctx, netdev, false)
}

// ReadModule is Module; full reads every byte of each half page the
// module's standard defines (for raw dumps), not only those decoding
// needs (optics.ReadFullImage).
func (d *Device) ReadModule(ctx context.Context, netdev string, full bool) (*ModuleReading, error) {
	r, err := d.OpenModuleReader(ctx, netdev)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	read := optics.ReadImage
	if full {
		read = optics.ReadFullImage
	}
	im, err := read(ctx, r)
	if err != nil {
		// Our errors already say what to do; keep them whole.
		var pe *PermissionError
		if errors.As(err, &pe) {
			return nil, pe
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("kernel: module EEPROM of %s: %w", r.netdev, cerr)
		}
		return nil, fmt.Errorf("kernel: module EEPROM of %s: %w", r.netdev, err)
	}
	mr := &ModuleReading{Netdev: r.netdev, Image: im}
	m, derr := optics.Decode(im)
	var de *optics.DecodeError
	switch {
	case derr == nil:
		mr.Module = m
	case errors.As(derr, &de) && de.Kind == optics.KindAllZeros:
		mr.Error, mr.ErrorKind = (&ZeroPageError{Netdev: r.netdev}).Error(), de.Kind
	case errors.As(derr, &de):
		mr.Error, mr.ErrorKind = de.Error(), de.Kind
		if de.Kind == optics.KindUnsupported {
			mr.Module = m // the identification is still worth showing
		}
	default:
		mr.Error = derr.Error()
	}
	return mr, nil
}
