package firmware

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/internal/fwimage"
)

// MCC instructions and states (PRM MCC; the database's enum names
// LOCK_UPDATE_HANDLE...).
const (
	insLock          = 1
	insRelease       = 2
	insUpdate        = 3
	insVerify        = 4
	insActivate      = 6
	insCancel        = 8
	insForceRelease  = 10
	stateIdle        = 0
	stateLocked      = 1
	stateDownload    = 3
	defaultWriteSize = 0x80
)

// Plan is an update checked against the adapter, before anything is
// written.
type Plan struct {
	Device string `json:"device"`
	PSID   string `json:"psid"`
	// From is the running version, Stored the one in flash now; To the
	// image's.
	From      string `json:"from"`
	Stored    string `json:"stored,omitempty"`
	To        string `json:"to"`
	Size      int    `json:"size"`
	Downgrade bool   `json:"downgrade"`
	// Same says the image is the version already running and stored.
	Same bool `json:"same"`
	// Component is the boot image's MCQS index.
	Component int `json:"component"`
	// Busy says who holds the update state machine ("" when idle).
	Busy string `json:"busy,omitempty"`
	// Via is the path: "mcc" (the registers) or "devlink" (the driver).
	Via string `json:"via"`

	writeSize int
	image     []byte
	pkg       []byte // the MFA2 package devlink flashes
}

// Options are the choices of an update.
type Options struct {
	AllowDowngrade bool
	// ForceRelease takes the update handle from a tool that holds it (a
	// tool that died mid-update), as mstflint's and the PRM's
	// FORCE_HANDLE_RELEASE does.
	ForceRelease bool
	// Progress is called after each block with the bytes written and the
	// total.
	Progress func(phase string, done, total int)
	// Poll is how often the state machine is read while it works
	// (default 20ms).
	Poll time.Duration
}

// Prepare checks an image against the adapter: the PSID must match, the
// hardware must be one the image supports, a downgrade needs
// AllowDowngrade, the image must fit. Errors about the image are
// InputErrors (exit 2); nothing is written.
func Prepare(ctx context.Context, ad *adapter.Adapter, f *File, o Options) (*Plan, error) {
	d, err := ad.Registers(ctx)
	if err != nil {
		return nil, err
	}
	id, err := d.Identity(ctx)
	if err != nil {
		return nil, err
	}
	data, im, err := f.ImageFor(id.PSID)
	if err != nil {
		return nil, err
	}
	if im.PSID != id.PSID {
		return nil, inputErr("the image is for PSID %s; this adapter's PSID is %s: an image for another board is refused (it could make the adapter unusable)", im.PSID, id.PSID)
	}
	if rd, err := d.Get(ctx, "MGIR", nil, nil, 0); err == nil {
		hw := uint32(u(rd.Decoded, "hw_info.hw_dev_id"))
		ok := hw == 0
		for _, h := range im.HWIDs {
			ok = ok || h == hw
		}
		if !ok {
			return nil, inputErr("the image supports hardware IDs %x; this adapter is 0x%x", im.HWIDs, hw)
		}
	}
	r := regs{d}
	info := &DeviceInfo{}
	boot, err := r.components(ctx, info)
	if err != nil {
		return nil, err
	}
	if boot < 0 {
		return nil, errors.New("the adapter lists no boot image component (MCQS): it cannot be updated through MCC")
	}
	p := &Plan{Device: ad.Name(), PSID: id.PSID, From: id.Firmware, To: im.Version.String(), Size: len(data), Component: boot, Via: ViaMCC, writeSize: defaultWriteSize, image: data}
	if v, err := r.version(ctx, boot, true); err == nil {
		p.Stored = v.Version
	}
	cur, err := fwimage.ParseVersion(id.Firmware)
	if err == nil {
		p.Downgrade = im.Version.Compare(cur) < 0
		p.Same = im.Version.Compare(cur) == 0 && (p.Stored == "" || p.Stored == id.Firmware)
	}
	if p.Downgrade && !o.AllowDowngrade {
		return nil, inputErr("the image (%s) is older than the running firmware (%s); add --allow-downgrade to install it", p.To, p.From)
	}
	caps, err := r.mcqi(ctx, boot, 0, false)
	if err != nil {
		return nil, err
	}
	pc := "data.mcqi_cap_ext."
	if max := int(u(caps, pc+"max_component_size")); max > 0 && len(data) > max {
		return nil, inputErr("the image is %d bytes; the adapter takes at most %d", len(data), max)
	}
	if w := int(u(caps, pc+"mcda_max_write_size")); w > 0 {
		p.writeSize = min(w, p.writeSize)
	}
	if word := 1 << u(caps, pc+"log_mcda_word_size"); word > 4 || p.writeSize%word != 0 {
		return nil, fmt.Errorf("the adapter's MCDA word is %d bytes; blocks of %d do not fit it", word, p.writeSize)
	}
	if m, err := r.mccGet(ctx, boot); err == nil && m.StateNum != stateIdle {
		p.Busy = fmt.Sprintf("%s holds the update state machine (state %s, idle %ds)", m.Owner, m.State, m.IdleSecond)
	}
	return p, nil
}

// MCCError is an update the adapter refused or failed (exit 3).
type MCCError struct {
	Step string
	Code int
}

func (e *MCCError) Error() string {
	return fmt.Sprintf("%s: the adapter reports error 0x%x: %s", e.Step, e.Code, mccErrorText(e.Code))
}

// mccErrorText says what an MCC error_code means (PRM MCC error_code, in
// our words) and what to do.
func mccErrorText(code int) string {
	switch code {
	case 0x1:
		return "a general error (the image may be too large, or the flash failed); retry, then check the adapter"
	case 0x2:
		return "the image's digest does not match: the file is damaged; download it again"
	case 0x3:
		return "the image does not apply to this adapter (PSID or hardware mismatch); use the image for this board"
	case 0x4:
		return "the image is signed with a key the adapter does not know; use an image NVIDIA signed for this board"
	case 0x5:
		return "the image's signature does not verify: the file is damaged or not genuine; download it again"
	case 0x6:
		return "the image is not signed, and this secure adapter takes signed images only"
	case 0x7:
		return "the signing key does not apply to this adapter"
	case 0x8:
		return "the image's format is bad (cut short or damaged); download it again"
	case 0x9:
		return "an update is pending a reset; reset the adapter first ('cxray fw reset')"
	case 0xD, 0xF:
		return "the adapter forbids this version (anti-rollback); use a newer image"
	}
	return "an error this tool does not know; see the PRM's MCC error codes"
}

// BusyError is an update refused because another tool holds the update
// state machine (exit 3).
type BusyError struct{ Who string }

func (e *BusyError) Error() string {
	return e.Who + "; wait for it to finish, or, if that tool died, run the update again with --force-release"
}

// Update runs the update flow (mlxfw_fsm.c's order): lock the update
// handle, UPDATE_COMPONENT, wait for DOWNLOAD, write the image in MCDA
// blocks, VERIFY_COMPONENT, ACTIVATE, release. The result is an image
// stored in flash that runs after the next firmware reset; the running
// firmware is not touched. On any error or when ctx ends (a signal, the
// deadline) the handle is cancelled and released with a short context of
// its own, so no handle is left held.
func Update(ctx context.Context, ad *adapter.Adapter, p *Plan, o Options) (err error) {
	d, err := ad.Registers(ctx)
	if err != nil {
		return err
	}
	r := regs{d}
	if o.Poll <= 0 {
		o.Poll = 20 * time.Millisecond
	}
	progress := func(phase string, done, total int) {
		if o.Progress != nil {
			o.Progress(phase, done, total)
		}
	}
	comp := p.Component
	m, err := r.mccGet(ctx, comp)
	if err != nil {
		return err
	}
	if m.StateNum != stateIdle {
		if !o.ForceRelease {
			return &BusyError{fmt.Sprintf("%s holds the update state machine (state %s, idle %ds)", m.Owner, m.State, m.IdleSecond)}
		}
		if _, err := r.mcc(ctx, insForceRelease, comp, 0, 0); err != nil {
			return fmt.Errorf("force the update handle's release (MCC FORCE_HANDLE_RELEASE): %w", err)
		}
		if m, err = r.mccGet(ctx, comp); err != nil {
			return err
		}
	}
	handle := m.Handle
	if _, err := r.mcc(ctx, insLock, comp, handle, 0); err != nil {
		return fmt.Errorf("lock the update handle (MCC LOCK_UPDATE_HANDLE): %w", err)
	}
	defer func() {
		// Release with a context of its own: the caller's may have ended.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err != nil {
			_, _ = r.mcc(rctx, insCancel, comp, handle, 0)
		}
		if _, rerr := r.mcc(rctx, insRelease, comp, handle, 0); rerr != nil && err == nil {
			err = fmt.Errorf("release the update handle (MCC RELEASE_UPDATE_HANDLE): %w", rerr)
		}
	}()
	// wait polls MCC until the state machine leaves the transient states
	// and is in want, or reports an error.
	wait := func(step string, want int) error {
		for {
			m, err := r.mccGet(ctx, comp)
			if err != nil {
				return err
			}
			if m.Error != 0 {
				return &MCCError{Step: step, Code: m.Error}
			}
			if m.StateNum == want {
				return nil
			}
			if m.StateNum == stateIdle {
				return fmt.Errorf("%s: the update state machine went idle: another tool released the handle", step)
			}
			if err := ad.Sleep(ctx, o.Poll); err != nil {
				return err
			}
		}
	}
	progress("erase", 0, p.Size)
	if _, err := r.mcc(ctx, insUpdate, comp, handle, p.Size); err != nil {
		return fmt.Errorf("start the update (MCC UPDATE_COMPONENT): %w", err)
	}
	if err := wait("prepare the flash (UPDATE_COMPONENT)", stateDownload); err != nil {
		return err
	}
	block := make([]byte, p.writeSize)
	for off := 0; off < p.Size; off += p.writeSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(p.writeSize, p.Size-off)
		clear(block)
		// Each dword carries four file bytes, the first in its least
		// significant byte, as the kernel writes them (mlx5 fw.c
		// mlx5_reg_mcda_set: the file read as host-order words on a
		// little-endian host, stored big-endian in the register).
		for i := 0; i < n; i += 4 {
			var w [4]byte
			copy(w[:], p.image[off+i:min(off+i+4, off+n)])
			block[i], block[i+1], block[i+2], block[i+3] = w[3], w[2], w[1], w[0]
		}
		as := idx("update_handle", fmt.Sprint(handle), "offset", fmt.Sprint(off), "size", fmt.Sprint(n))
		if _, err := r.set(ctx, "MCDA", as, block[:(n+3)&^3]); err != nil {
			return fmt.Errorf("write the image at offset 0x%x (MCDA): %w", off, err)
		}
		progress("download", off+n, p.Size)
	}
	progress("verify", p.Size, p.Size)
	if _, err := r.mcc(ctx, insVerify, comp, handle, 0); err != nil {
		return fmt.Errorf("verify the image (MCC VERIFY_COMPONENT): %w", err)
	}
	if err := wait("verify the image", stateLocked); err != nil {
		return err
	}
	progress("activate", p.Size, p.Size)
	if _, err := r.mcc(ctx, insActivate, comp, handle, 0); err != nil {
		return fmt.Errorf("activate the image (MCC ACTIVATE): %w", err)
	}
	return wait("activate the image", stateLocked)
}
