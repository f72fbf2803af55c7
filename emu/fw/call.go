package fw

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/prm"
)

// Handler gives a register its behaviour. It reads the request through c,
// writes the reply with c.Put and returns a status (StatusOK, or a failure
// made with c.Fail). It runs with the firmware's model locked: it may use the
// Call's methods but must not call the Firmware's exported methods.
type Handler func(c *Call) uint8

// Behaviour is what a register does beyond the generic store.
type Behaviour struct {
	// Access handles every request to the register.
	Access Handler
}

// Call is one access-register request as a Handler sees it.
type Call struct {
	Register *prm.Register
	Plan     *prm.Plan
	Method   emu.Method
	// In is the request payload (a private copy), at least Plan.Bytes long.
	In []byte
	// Out is the reply, as long as In. It starts with the request's index
	// fields and zeros elsewhere; Put writes into it.
	Out []byte
	// Now is the firmware clock at the time of the request.
	Now time.Time

	fw      *Firmware
	ports   []int // the function's view: local port L is ports[L-1]; nil: identity
	dec     *prm.Decoded
	decErr  error
	pending []prm.Assignment
	reason  string
	err     error
	replay  bool
	changed bool
}

// Replaying says the request is a recorded one performed again (see
// View.Replay): handlers skip their faults, which belong to the process
// that switched them on, not to the device.
func (c *Call) Replaying() bool { return c.replay }

// Changed marks a GET that changed the device (clear-on-read state), so a
// recorder sees it; SETs and GETs that set an OP field are marked already.
func (c *Call) Changed() { c.changed = true }

// Fail records why the request fails and returns status, so a handler can
// write `return c.Fail(StatusBadParam, "local_port %d does not exist", p)`.
func (c *Call) Fail(status uint8, format string, args ...any) uint8 {
	c.reason = fmt.Sprintf(format, args...)
	return status
}

// Internal answers a firmware bug found by a handler (a codec error: a
// field that does not encode) with StatusInternalError and records it for
// Firmware.LastError, so a tool sees a failed access, never a reply with
// fields silently left zero.
func (c *Call) Internal(err error) uint8 { return c.internal(err) }

// internal records a firmware bug (a field the handler expected is missing,
// a value that does not encode) and answers StatusInternalError.
func (c *Call) internal(err error) uint8 {
	if c.err == nil {
		c.err = err
	}
	c.reason = err.Error()
	return StatusInternalError
}

// decoded decodes the request once.
func (c *Call) decoded() (*prm.Decoded, error) {
	if c.dec == nil && c.decErr == nil {
		c.dec, c.decErr = c.Plan.Decode(c.In)
	}
	return c.dec, c.decErr
}

// Has says whether the request holds the field at path (false for fields
// this database revision lacks, or union members the request does not select).
func (c *Call) Has(path string) bool {
	d, err := c.decoded()
	if err != nil {
		return false
	}
	_, err = d.Get(path)
	return err == nil
}

// Req returns the number at path in the request; 0 when the field is absent
// (in strict mode an absent field is recorded as a firmware bug).
func (c *Call) Req(path string) uint64 {
	d, err := c.decoded()
	if err == nil {
		var v prm.Value
		if v, err = d.Get(path); err == nil {
			return v.Uint()
		}
	}
	c.fw.missing(c, path, err)
	return 0
}

// Put queues path=value for the reply. Values may be any integer type, a
// bool, or a string (enum name, text for ASCII arrays, aa:bb:.. for MACs).
// The queue is encoded by Flush, which the firmware calls after the handler.
func (c *Call) Put(path string, value any) {
	var s string
	switch v := value.(type) {
	case string:
		s = v
	case bool:
		s = "0"
		if v {
			s = "1"
		}
	case uint64:
		s = strconv.FormatUint(v, 10)
	case uint32:
		s = strconv.FormatUint(uint64(v), 10)
	case uint16:
		s = strconv.FormatUint(uint64(v), 10)
	case uint8:
		s = strconv.FormatUint(uint64(v), 10)
	case uint:
		s = strconv.FormatUint(uint64(v), 10)
	case int:
		s = strconv.FormatInt(int64(v), 10)
	case int64:
		s = strconv.FormatInt(v, 10)
	case int32:
		s = strconv.FormatInt(int64(v), 10)
	default:
		c.internal(fmt.Errorf("%s.%s: value of type %T cannot be encoded", c.Register.Name, path, value))
		return
	}
	c.pending = append(c.pending, prm.Assignment{Path: path, Value: s})
}

// Flush encodes the queued values into Out. Fields this database revision
// does not have are skipped (the same firmware runs over older and newer
// databases), unless the firmware is strict.
func (c *Call) Flush() error {
	if len(c.pending) == 0 {
		return c.err
	}
	as := c.pending
	c.pending = nil
	if err := c.Plan.Encode(c.Out, as); err == nil {
		return c.err
	}
	// Something in the batch failed: apply one by one to find it, keeping
	// what works.
	for _, a := range as {
		if _, err := c.Plan.Resolve(a.Path, c.Out); err != nil {
			c.fw.missing(c, a.Path, err)
			continue
		}
		if err := c.Plan.Encode(c.Out, []prm.Assignment{a}); err != nil && c.err == nil {
			c.err = fmt.Errorf("%s: cannot encode %s=%s: %w", c.Register.Name, a.Path, a.Value, err)
		}
	}
	return c.err
}

// Generic answers the request from the generic register store, for handlers
// that only add behaviour to some instances (PDDR pages they do not model).
func (c *Call) Generic() uint8 { return c.fw.generic(c) }

// Seed is the firmware's seed, for handlers that need deterministic noise.
func (c *Call) Seed() uint64 { return c.fw.spec.Seed }

// Port returns the state of a port named as the request names it (local
// port numbers are relative to the PCI function the request came through),
// for handlers added by other packages: the PDDR module page needs the
// port's module and link. PortStatus.LocalPort is the adapter-wide number.
func (c *Call) Port(local int) (PortStatus, bool) {
	p := c.fw.port(c.adapterPort(local))
	if p == nil {
		return PortStatus{}, false
	}
	return c.fw.portStatus(p, c.Now), true
}

// adapterPort maps a request's local port to the adapter's numbering.
func (c *Call) adapterPort(local int) int {
	if c.ports == nil {
		return local
	}
	if local < 1 || local > len(c.ports) {
		return 0
	}
	return c.ports[local-1]
}

// Module returns the state of a module (0-based).
func (c *Call) Module(index int) (ModuleStatus, bool) {
	if index < 0 || index >= len(c.fw.modules) {
		return ModuleStatus{}, false
	}
	return c.fw.modules[index].status, true
}

// localPort reads local_port (with lp_msb) and checks the port exists.
func (c *Call) localPort() (*portState, uint8) {
	lp := int(c.Req("local_port"))
	if c.Has("lp_msb") {
		lp |= int(c.Req("lp_msb")) << 8
	}
	p := c.fw.port(c.adapterPort(lp))
	if p == nil {
		n := len(c.fw.ports)
		if c.ports != nil {
			n = len(c.ports)
		}
		return nil, c.Fail(StatusBadParam, "local_port %d does not exist here (ports 1..%d; on an adapter, open the PCI function of another port)", lp, n)
	}
	return p, StatusOK
}

// errMissing marks a field the database does not have.
var errMissing = errors.New("field not in this database")

// Bit helpers over MSB-first bit offsets (the codec's convention): used only
// for masks (which bits are index or writable fields), never to place fields.

func setMaskBits(m []byte, bit, width int) {
	end := min(bit+width, len(m)*8)
	for i := max(bit, 0); i < end; i++ {
		m[i/8] |= 0x80 >> (i % 8)
	}
}

// merge returns old with the bits of mask taken from in.
func merge(old, in, mask []byte) []byte {
	out := make([]byte, len(in))
	copy(out, old)
	for i := range out {
		var m byte
		if i < len(mask) {
			m = mask[i]
		}
		out[i] = out[i]&^m | in[i]&m
	}
	return out
}
