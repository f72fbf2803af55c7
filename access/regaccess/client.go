package regaccess

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cxray/cxray/access/icmd"
	"github.com/cxray/cxray/access/vsec"
)

// Errors for requests the client refuses before sending.
var (
	ErrBadRequest = errors.New("bad register size")
	ErrNotAllowed = errors.New("access register not allowed")
)

// Client accesses registers through ICMD. Safe for concurrent use.
type Client struct {
	ic     *icmd.Client
	capsOK atomic.Bool // QUERY_CAP showed access to all registers is allowed
}

// New returns a client over ic.
func New(ic *icmd.Client) *Client { return &Client{ic: ic} }

// MaxRegisterSize is the largest payload one access can carry: the ICMD
// mailbox minus the TLV header (812 bytes with a 0x340-byte mailbox).
func (c *Client) MaxRegisterSize() int { return c.ic.MailboxSize() - HeaderSize }

// Request is one access. Data is the whole register buffer; its length sets
// the register TLV length. WriteSize and ReadSize limit the payload bytes sent
// and read back for variable-size registers (0 means all of Data): an NV GET,
// for example, sends only the 12-byte header but reads the data after it.
type Request struct {
	Method    Method
	ID        uint16
	Data      []byte
	WriteSize int
	ReadSize  int
}

// Access sends data as register id with method and returns the register as
// the firmware answered it (same length as data).
func (c *Client) Access(ctx context.Context, method Method, id uint16, data []byte) ([]byte, error) {
	return c.Do(ctx, Request{Method: method, ID: id, Data: data})
}

// Do performs r. A non-zero firmware status is a *StatusError. Bytes past
// ReadSize in the result keep the values of r.Data.
func (c *Client) Do(ctx context.Context, r Request) ([]byte, error) {
	n := len(r.Data)
	w, rd := r.WriteSize, r.ReadSize
	if w == 0 {
		w = n
	}
	if rd == 0 {
		rd = n
	}
	switch {
	case n == 0 || n%4 != 0 || w%4 != 0 || rd%4 != 0:
		return nil, fmt.Errorf("regaccess: register 0x%04x: sizes (%d bytes, write %d, read %d) must be non-zero multiples of 4; "+
			"use the register size from `cxray prm show`: %w", r.ID, n, w, rd, ErrBadRequest)
	case n > c.MaxRegisterSize() || w > n || rd > n || w < 0 || rd < 0:
		return nil, fmt.Errorf("regaccess: register 0x%04x: %d bytes (write %d, read %d) do not fit: at most %d bytes per access "+
			"and write/read sizes within the register: %w", r.ID, n, w, rd, c.MaxRegisterSize(), ErrBadRequest)
	case r.Method != Get && r.Method != Set:
		return nil, fmt.Errorf("regaccess: register 0x%04x: method %d is not GET (1) or SET (2): %w", r.ID, r.Method, ErrBadRequest)
	}
	if err := c.checkCaps(ctx); err != nil {
		return nil, err
	}
	frame := EncodeRequest(r.Method, r.ID, r.Data)
	var payload []byte
	// A busy firmware (status 1) is asked again, a little later each time,
	// until the caller's deadline (vsec.BusyRetry, the policy fwctl's
	// commands follow too); the request is resent whole, so nothing is
	// skipped.
	retry := vsec.NewBusyRetry(ctx, c.ic.Clock())
	busy := func(tries int, cause error) error {
		err := fmt.Errorf("regaccess: %s: the firmware answered busy %d times in %v, until the command's deadline: %w",
			c.ic.Gateway().Name(), tries, retry.Waited().Round(time.Millisecond), &StatusError{Status: StatusBusy, RegisterID: r.ID, Method: r.Method})
		if cause != nil {
			err = fmt.Errorf("%w; the last try was cut short: %w", err, cause)
		}
		return err
	}
	for try := 1; ; try++ {
		reply, err := c.ic.Send(ctx, icmd.OpAccessReg, frame[:HeaderSize+w], HeaderSize+rd)
		if err != nil {
			if try > 1 && ctx.Err() != nil {
				// The deadline (or a signal) ended a retry: what the
				// firmware said until then is the answer; the retry's
				// own failure is only how it was cut short.
				if !errors.Is(err, ctx.Err()) {
					err = fmt.Errorf("%w (%w)", err, ctx.Err())
				}
				return nil, busy(try-1, err)
			}
			return nil, fmt.Errorf("regaccess: %s register 0x%04x: %w", r.Method, r.ID, err)
		}
		p, status, err := ParseReply(reply, r.ID, rd)
		if err != nil {
			return nil, err
		}
		if status == StatusBusy {
			if retry.Again(ctx) {
				continue
			}
			return nil, busy(try, ctx.Err()) // nil at the deadline: busy is the answer
		}
		if status != StatusOK {
			return nil, &StatusError{Status: status, RegisterID: r.ID, Method: r.Method}
		}
		payload = p
		break
	}
	out := append([]byte(nil), r.Data...)
	copy(out, payload)
	return out, nil
}

// checkCaps runs ICMD_QUERY_CAP once per client (until it succeeds) and
// refuses firmware that restricts access register to a few registers, as
// mstreg does.
func (c *Client) checkCaps(ctx context.Context) error {
	if c.capsOK.Load() {
		return nil
	}
	caps := c.ic.Capabilities() // asked at open, in the open's session
	if caps == nil {
		var err error
		if caps, err = c.ic.QueryCapabilities(ctx); err != nil {
			return fmt.Errorf("regaccess: query ICMD capabilities: %w", err)
		}
	}
	if !caps.AccessRegAll {
		return fmt.Errorf("regaccess: the firmware does not allow generic register access over ICMD "+
			"(QUERY_CAP allow_icmd_access_reg_on_all_registers is 0); update the firmware: %w", ErrNotAllowed)
	}
	c.capsOK.Store(true)
	return nil
}
