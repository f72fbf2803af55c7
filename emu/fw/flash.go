package fw

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/internal/fwimage"
	"github.com/cxray/cxray/prm"
)

// The flash and the component update state machine (MCC, MCDA, with MCQS
// and MCQI reporting it), as the PRM describes the flow and the kernel's
// mlxfw drives it (drivers/net/ethernet/mellanox/mlxfw/mlxfw_fsm.c):
//
//	IDLE --LOCK_UPDATE_HANDLE--> LOCKED --UPDATE_COMPONENT--> INITIALIZE
//	(erasing) --> DOWNLOAD (MCDA writes) --VERIFY_COMPONENT--> VERIFY -->
//	LOCKED --ACTIVATE--> ACTIVATE --> LOCKED --RELEASE_UPDATE_HANDLE--> IDLE
//
// A failed check (format, PSID, hardware, signature) leaves the FSM
// LOCKED with error_code set, as the kernel reads it; CANCEL clears it.
// The flash holds two images: the one running, and the stored one the
// next firmware reset boots. Only ACTIVATE changes the stored one, in
// one step, and only a firmware reset (MFRL, FirmwareReset) or a power
// cycle makes it run: an update cut at any point leaves the device
// running what it ran, booting either the old image or the new one.
//
// Timed steps (erasing, verifying, activating) end at times fixed when
// the command is accepted, so every process replaying the same commands
// at the same emulated times sees the same states (emu/state).

// FSM states (MCC control_state) and instructions (MCC instruction).
const (
	fsmIdle       = 0
	fsmLocked     = 1
	fsmInitialize = 2
	fsmDownload   = 3
	fsmVerify     = 4
	fsmActivate   = 6

	mccLock          = 1
	mccRelease       = 2
	mccUpdate        = 3
	mccVerify        = 4
	mccActivateComp  = 5
	mccActivate      = 6
	mccRead          = 7
	mccCancel        = 8
	mccCheckHandle   = 9
	mccForceRelease  = 10
	mccReadPending   = 11
	ownerICMD        = 5 // handle_owner_type: ICMD, the path every emulated access takes
	mcdaWordSize     = 4
	mcdaMaxWriteSize = 0x80
)

// MCC error codes (error_code) the emulated firmware reports.
const (
	MCCErrOK              = 0x0
	MCCErrGeneral         = 0x1
	MCCErrNotApplicable   = 0x3
	MCCErrUnknownKey      = 0x4
	MCCErrAuthFailed      = 0x5
	MCCErrUnsigned        = 0x6
	MCCErrBadFormat       = 0x8
	MCCErrBlockedPendingR = 0x9
)

// FlashSpec is the flash's timing and limits. Zero values take the
// defaults.
type FlashSpec struct {
	// EraseTime is how long UPDATE_COMPONENT stays in INITIALIZE
	// (default 300ms); VerifyTime how long VERIFY_COMPONENT takes (500ms);
	// ActivateTime how long ACTIVATE takes (200ms).
	EraseTime, VerifyTime, ActivateTime time.Duration
	// HandleTimeout releases an update handle whose owner sent no command
	// for this long (default 10m): a tool that died must not hold the
	// flash forever. The emulator's choice; the PRM reports the idle time
	// (MCC time_elapsed_since_last_cmd) without naming a limit.
	HandleTimeout time.Duration
	// MaxComponentSize is the largest boot image (default 32 MiB).
	MaxComponentSize int
	// ImageSize is the size of the image the adapter ships with, as MCQI
	// reports it (default 26 MiB).
	ImageSize int
}

func (s FlashSpec) withDefaults() FlashSpec {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&s.EraseTime, 300*time.Millisecond)
	def(&s.VerifyTime, 500*time.Millisecond)
	def(&s.ActivateTime, 200*time.Millisecond)
	def(&s.HandleTimeout, 10*time.Minute)
	if s.MaxComponentSize == 0 {
		s.MaxComponentSize = 32 << 20
	}
	if s.ImageSize == 0 {
		s.ImageSize = 0x01A00000
	}
	return s
}

func (s FlashSpec) validate() error {
	for _, d := range []time.Duration{s.EraseTime, s.VerifyTime, s.ActivateTime, s.HandleTimeout} {
		if d < 0 || d > 24*time.Hour {
			return fmt.Errorf("flash: time %v must be 0..24h", d)
		}
	}
	if s.MaxComponentSize < 0 || s.MaxComponentSize > 1<<30 || s.ImageSize < 0 || s.ImageSize > 1<<30 {
		return fmt.Errorf("flash: sizes must be 0..1 GiB")
	}
	return nil
}

// FlashImage describes an image in the flash.
type FlashImage struct {
	Version Version
	Built   time.Time
	PSID    string
	Size    int
	// SHA256 of the file it came from ("" for the shipped image).
	SHA256 string
}

// FlashStatus is the flash as a test or the control socket sees it.
type FlashStatus struct {
	Running, Stored FlashImage
	// State is the FSM's control_state; Handle the update handle that owns
	// it (0 when idle); Error its error_code; Downloaded the bytes written.
	State      int
	Handle     uint32
	Error      int
	Downloaded int
}

type flashState struct {
	spec            FlashSpec
	running, stored FlashImage

	state      int
	handle     uint32
	nextHandle uint32
	lastCmd    time.Time
	errCode    int
	comp       int
	size       int
	data       []byte
	high       int // bytes written so far (the highest offset reached)
	verified   *FlashImage
	// A timed step: at doneAt the state becomes doneState with doneErr.
	doneAt    time.Time
	doneState int
	doneErr   int
	doneImage *FlashImage
}

func (f *Firmware) initFlash() {
	s := f.spec
	fl := &flashState{spec: s.Flash.withDefaults(), nextHandle: uint32(s.Seed%0xFFFFF) + 1}
	fl.running = FlashImage{Version: s.FW, Built: s.FWBuildTime, PSID: s.PSID, Size: fl.spec.ImageSize}
	fl.stored = fl.running
	if s.PendingFW != nil {
		fl.stored.Version = *s.PendingFW
	}
	f.flash = fl
}

// advance finishes timed steps and releases an abandoned handle.
func (fl *flashState) advance(now time.Time) {
	if !fl.doneAt.IsZero() && !now.Before(fl.doneAt) {
		fl.state, fl.errCode = fl.doneState, fl.doneErr
		if fl.doneImage != nil {
			fl.verified = fl.doneImage
		}
		fl.doneAt, fl.doneErr, fl.doneImage = time.Time{}, 0, nil
	}
	if fl.state != fsmIdle && fl.spec.HandleTimeout > 0 && now.Sub(fl.lastCmd) >= fl.spec.HandleTimeout {
		fl.release()
	}
}

func (fl *flashState) release() {
	fl.state, fl.handle, fl.errCode = fsmIdle, 0, 0
	fl.data, fl.high, fl.size, fl.verified = nil, 0, 0, nil
	fl.doneAt, fl.doneErr, fl.doneImage = time.Time{}, 0, nil
}

// clearStep forgets a timed step and what the download held, keeping the
// handle (CANCEL).
func (fl *flashState) clearStep() {
	fl.state, fl.errCode = fsmLocked, 0
	fl.data, fl.high, fl.size, fl.verified = nil, 0, 0, nil
	fl.doneAt, fl.doneErr, fl.doneImage = time.Time{}, 0, nil
}

// pending says a stored image waits for a firmware reset.
func (fl *flashState) pending() bool { return fl.stored != fl.running }

// reset is a firmware reset: the stored image runs; an update in progress
// is dropped.
func (fl *flashState) reset() {
	fl.running = fl.stored
	fl.release()
}

// MCC: the update state machine.
func (f *Firmware) mcc(c *Call) uint8 {
	fl := f.flash
	fl.advance(c.Now)
	if dt, di := c.Req("device_type"), c.Req("device_index"); dt != 0 || di != 0 {
		return c.Fail(StatusBadParam, "MCC device_type %d / device_index %d: only the adapter itself (0/0) is updated here", dt, di)
	}
	if c.Method == emu.MethodSet {
		if st := f.mccCommand(c, fl); st != StatusOK {
			return st
		}
	}
	f.mccReply(c, fl)
	return StatusOK
}

func (f *Firmware) mccReply(c *Call, fl *flashState) {
	elapsed := uint64(0)
	if fl.state != fsmIdle {
		elapsed = uint64(max(c.Now.Sub(fl.lastCmd), 0) / time.Second)
	}
	c.Put("time_elapsed_since_last_cmd", min(elapsed, 0xFFF))
	c.Put("control_state", fl.state)
	c.Put("error_code", fl.errCode)
	progress := 101 // not reported
	if fl.state == fsmDownload && fl.size > 0 {
		progress = min(100, fl.high*100/fl.size)
	}
	c.Put("control_progress", progress)
	if fl.state == fsmIdle {
		// The token the next LOCK_UPDATE_HANDLE must carry (the kernel's
		// mlx5_fsm_lock and mstflint read it here).
		c.Put("update_handle", fl.nextHandle)
		c.Put("handle_owner_type", 0)
	} else {
		c.Put("update_handle", 0)
		c.Put("handle_owner_type", ownerICMD)
	}
	c.Put("component_index", fl.comp)
}

func (f *Firmware) mccCommand(c *Call, fl *flashState) uint8 {
	ins := int(c.Req("instruction"))
	h := uint32(c.Req("update_handle"))
	owner := func() uint8 {
		if fl.state == fsmIdle {
			return c.Fail(StatusBadParam, "MCC instruction %d: no update handle is locked; lock one first (LOCK_UPDATE_HANDLE)", ins)
		}
		if h != fl.handle {
			return c.Fail(StatusBadParam, "MCC instruction %d: update handle 0x%x does not own the update state machine (another tool holds it)", ins, h)
		}
		return StatusOK
	}
	transient := func() bool { return !fl.doneAt.IsZero() }
	switch ins {
	case mccLock:
		if fl.state != fsmIdle {
			return c.Fail(StatusBusy, "MCC LOCK_UPDATE_HANDLE: the update state machine is held by another tool (idle %ds)", int(c.Now.Sub(fl.lastCmd)/time.Second))
		}
		if h != fl.nextHandle {
			return c.Fail(StatusBadParam, "MCC LOCK_UPDATE_HANDLE with handle 0x%x; read MCC for the handle to use (0x%x)", h, fl.nextHandle)
		}
		fl.release()
		fl.state, fl.handle = fsmLocked, h
		fl.nextHandle = fl.nextHandle%0xFFFFFF + 1
	case mccRelease:
		if st := owner(); st != StatusOK {
			return st
		}
		fl.release()
		return StatusOK
	case mccForceRelease:
		fl.release()
		return StatusOK
	case mccCheckHandle:
		if st := owner(); st != StatusOK {
			return st
		}
	case mccCancel:
		if st := owner(); st != StatusOK {
			return st
		}
		fl.clearStep()
	case mccUpdate:
		if st := owner(); st != StatusOK {
			return st
		}
		if fl.state != fsmLocked || transient() || fl.errCode != 0 {
			return c.Fail(StatusBadParam, "MCC UPDATE_COMPONENT in state %d; the state machine must be LOCKED without an error", fl.state)
		}
		comp, size := int(c.Req("component_index")), int(c.Req("component_size"))
		if comp < 0 || comp >= len(components) {
			return c.Fail(StatusBadParam, "MCC component_index %d does not exist (0..%d)", comp, len(components)-1)
		}
		fl.clearStep()
		fl.comp = comp
		if components[comp].identifier != "BOOT_IMG" {
			fl.errCode = MCCErrNotApplicable // only the boot image is updated here
			break
		}
		if size > fl.spec.MaxComponentSize {
			fl.errCode = MCCErrGeneral
			break
		}
		fl.size = size
		fl.data = make([]byte, 0, size)
		fl.state = fsmInitialize
		fl.doneAt, fl.doneState, fl.doneErr = c.Now.Add(fl.spec.EraseTime), fsmDownload, MCCErrOK
	case mccVerify:
		if st := owner(); st != StatusOK {
			return st
		}
		if fl.state != fsmDownload || transient() {
			return c.Fail(StatusBadParam, "MCC VERIFY_COMPONENT in state %d; download the component first (DOWNLOAD)", fl.state)
		}
		im, code := f.checkImage(fl)
		fl.state = fsmVerify
		fl.doneAt, fl.doneState, fl.doneErr, fl.doneImage = c.Now.Add(fl.spec.VerifyTime), fsmLocked, code, im
	case mccActivate, mccActivateComp:
		if st := owner(); st != StatusOK {
			return st
		}
		if fl.state != fsmLocked || transient() || fl.verified == nil || fl.errCode != 0 {
			return c.Fail(StatusBadParam, "MCC ACTIVATE in state %d; verify a component first (VERIFY_COMPONENT)", fl.state)
		}
		// The boot image switches now, in one step; the state shows
		// ACTIVATE for the time the firmware takes to say so.
		fl.stored = *fl.verified
		fl.verified = nil
		fl.data = nil
		fl.state = fsmActivate
		fl.doneAt, fl.doneState, fl.doneErr = c.Now.Add(fl.spec.ActivateTime), fsmLocked, MCCErrOK
	case mccRead, mccReadPending:
		return c.Fail(StatusBadParam, "MCC READ_COMPONENT: this firmware does not read components back (MCQI rd_en is 0)")
	default:
		return c.Fail(StatusBadParam, "MCC instruction %d is not one this firmware runs", ins)
	}
	fl.lastCmd = c.Now
	return StatusOK
}

// checkImage verifies the downloaded component as the device would.
func (f *Firmware) checkImage(fl *flashState) (*FlashImage, int) {
	if fl.size != 0 && len(fl.data) != fl.size {
		return nil, MCCErrBadFormat
	}
	im, err := fwimage.Parse(fl.data)
	if err != nil {
		return nil, MCCErrBadFormat
	}
	hwOK := false
	for _, id := range im.HWIDs {
		hwOK = hwOK || id == uint32(f.spec.HWDevID)
	}
	if im.PSID != f.spec.PSID || !hwOK {
		return nil, MCCErrNotApplicable
	}
	switch im.CheckSignature(fl.data) {
	case fwimage.SignatureMissing:
		if f.spec.Secure {
			return nil, MCCErrUnsigned
		}
	case fwimage.SignatureUnknownKey:
		return nil, MCCErrUnknownKey
	case fwimage.SignatureBad:
		return nil, MCCErrAuthFailed
	}
	sum := sha256.Sum256(fl.data)
	return &FlashImage{Version: Version{im.Version.Major, im.Version.Minor, im.Version.SubMinor}, Built: im.Released,
		PSID: im.PSID, Size: len(fl.data), SHA256: hex.EncodeToString(sum[:])}, MCCErrOK
}

// MCDA: the component's data, in blocks of whole words at increasing
// offsets while the state machine downloads.
func (f *Firmware) mcda(c *Call) uint8 {
	fl := f.flash
	fl.advance(c.Now)
	if c.Method != emu.MethodSet {
		return c.Fail(StatusBadParam, "MCDA reads are not supported (MCQI rd_en is 0); MCDA writes component data")
	}
	if h := uint32(c.Req("update_handle")); fl.state == fsmIdle || h != fl.handle {
		return c.Fail(StatusBadParam, "MCDA with update handle 0x%x, which does not own the update state machine", h)
	}
	if fl.state != fsmDownload || !fl.doneAt.IsZero() {
		return c.Fail(StatusBadParam, "MCDA in state %d: data is written in DOWNLOAD only", fl.state)
	}
	off, n := int(c.Req("offset")), int(c.Req("size"))
	start, room, ok := leafSpan(c.Plan, "data")
	if !ok {
		return c.internal(fmt.Errorf("MCDA: this database has no data field"))
	}
	switch {
	case n <= 0 || n > min(mcdaMaxWriteSize, room):
		return c.Fail(StatusBadParam, "MCDA size %d: 1..%d bytes per write", n, min(mcdaMaxWriteSize, room))
	case off%mcdaWordSize != 0:
		return c.Fail(StatusBadParam, "MCDA offset %d is not a multiple of the %d-byte word", off, mcdaWordSize)
	case off != len(fl.data):
		return c.Fail(StatusBadParam, "MCDA offset %d: the component is written in order; the next offset is %d", off, len(fl.data))
	case fl.size > 0 && off+n > fl.size:
		return c.Fail(StatusBadParam, "MCDA writes past the component size %d (offset %d, size %d)", fl.size, off, n)
	case off+n > fl.spec.MaxComponentSize:
		return c.Fail(StatusBadParam, "MCDA writes past the largest component (%d bytes)", fl.spec.MaxComponentSize)
	}
	// Each data dword carries four file bytes, the first in its least
	// significant byte: tools load the file as little-endian words and
	// the register carries them big-endian (mlxfw, mstflint).
	in := c.In[start : start+n]
	for i := 0; i < n; i += 4 {
		w := in[i:min(i+4, n)]
		var word [4]byte
		copy(word[:], w)
		fl.data = append(fl.data, word[3], word[2], word[1], word[0])
	}
	fl.data = fl.data[:off+n]
	fl.high = len(fl.data)
	fl.lastCmd = c.Now
	return StatusOK
}

// leafSpan is the byte range of a field (an array: all its elements).
func leafSpan(p *prm.Plan, path string) (start, n int, ok bool) {
	for _, l := range p.Leaves() {
		if l.Path == path && l.Bit%8 == 0 && l.Width%8 == 0 && !l.Variable {
			return l.Bit / 8, l.Width * max(l.Count, 1) / 8, true
		}
	}
	return 0, 0, false
}

// FirmwareReset is what a firmware reset does to the flash: the stored
// image runs. Handlers of other packages (the NV store's MFRL) call it.
func (c *Call) FirmwareReset() { c.fw.flash.reset() }

// Flash returns the flash's state (for tests and the control socket).
func (f *Firmware) Flash() FlashStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl := f.flash
	fl.advance(f.clk.Now())
	return FlashStatus{Running: fl.running, Stored: fl.stored, State: fl.state, Handle: fl.handle, Error: fl.errCode, Downloaded: len(fl.data)}
}

// Running is the running firmware version.
func (f *Firmware) Running() Version {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.flash.running.Version
}

// PowerCycle is a power cut and power-on: the stored image runs, and an
// update in progress is gone.
func (f *Firmware) PowerCycle() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flash.reset()
}
