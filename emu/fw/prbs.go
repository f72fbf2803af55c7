package fw

import (
	"time"

	"github.com/cxray/cxray/emu"
)

// PRBS test mode: PPTT (the transmitter's generator) and PPRT (the
// receiver's checker), the PRM's "Port PRBS Tx/Rx Tuning" registers. The
// emulated port runs one pattern on all its lanes (ls = 0: no per-lane
// configuration). The checker locks on a lane when the generator sends the
// pattern it checks for (the partner, or a loopback, returns it), the link
// has trained and the lane is not hopeless; the errors it counts are the
// lane's raw errors, PPCNT's physical-layer statistics, which follow the
// lane's injected BER (link.lane_ber). A port whose generator runs trains
// its PHY even when administratively down (mstlink takes the port down
// before it starts the test): its link counts as up, so its counters run;
// PAOS still says down (the port is down; its PHY runs the test), and
// one left up keeps carrying its link state (docs/link.md). PPAOS tells
// the test mode (ppaos).

// prbsModes are the patterns the emulated port generates and checks: bits
// of prbs_modes_cap, numbered as prbs_mode_admin (PRM PPTT/PPRT): PRBS31,
// PRBS23A, PRBS7, PRBS11, PRBS9, PRBS13A, SSPRQ, PRBS15.
const prbsModes = 1<<0 | 1<<1 | 1<<5 | 1<<6 | 1<<11 | 1<<17 | 1<<22 | 1<<24

// prbsRateCap are the lane rates the emulated port tests at (lane_rate_cap
// bits: SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR), and prbsRateBit maps a
// lane_rate_admin number (PRM PPTT) to its bit of lane_rate_cap.
const prbsRateCap = 1<<1 | 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<9 | 1<<10

var prbsRateBit = map[uint64]uint{0: 1, 1: 3, 2: 4, 3: 5, 4: 6, 5: 7, 6: 9, 7: 10, 10: 0, 11: 2, 12: 8}

// prbsLockBER is the lane BER past which the checker cannot lock.
const prbsLockBER = 1e-2

// prbsSide is one direction's test-mode setting.
type prbsSide struct {
	on         bool
	mode       uint8
	rate       uint16 // lane_rate_admin (PPTT), lane_rate_oper (PPRT)
	modulation uint8
	invert     bool      // p: the pattern's polarity inverted
	at         time.Time // when it was last set
}

// prbsState is a port's test mode: the two sides and PPAOS's
// phy_test_mode_admin and phy_status_admin as last set.
type prbsState struct {
	tx, rx                 prbsSide
	testAdmin, statusAdmin uint8
}

// ppaos is the PHY's test mode (PRM PPAOS), as mstlink uses it:
// phy_test_mode_status says whether the generator or the checker runs;
// setting phy_test_mode_admin to regular operation (0) ends the test, as
// mstlink --test_mode DS does before it brings the port up again.
func (f *Firmware) ppaos(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	if st := c.portType(); st != StatusOK {
		return st
	}
	if c.Method == emu.MethodSet {
		admin := c.Req("phy_test_mode_admin")
		if admin > 1 {
			return c.Fail(StatusBadParam, "PPAOS phy_test_mode_admin %d: give 0 (regular operation) or 1 (PHY test mode)", admin)
		}
		p.prbs.testAdmin, p.prbs.statusAdmin = uint8(admin), uint8(c.Req("phy_status_admin"))
		if admin == 0 && (p.prbs.tx.on || p.prbs.rx.on) {
			p.prbs.tx.on, p.prbs.rx.on = false, false
			p.prbs.tx.at, p.prbs.rx.at = c.Now, c.Now
			f.relink(c.Now)
		}
	}
	c.Put("phy_test_mode_admin", p.prbs.testAdmin)
	c.Put("phy_test_mode_status", p.prbs.tx.on || p.prbs.rx.on)
	c.Put("phy_status_admin", p.prbs.statusAdmin)
	return StatusOK
}

func (f *Firmware) pptt(c *Call) uint8 { return f.prbsReg(c, true) }
func (f *Firmware) pprt(c *Call) uint8 { return f.prbsReg(c, false) }

func (f *Firmware) prbsReg(c *Call, tx bool) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	if st := c.portType(); st != StatusOK {
		return st
	}
	side := &p.prbs.rx
	if tx {
		side = &p.prbs.tx
	}
	if c.Method == emu.MethodSet {
		if c.Has("le") && c.Req("le") != 0 {
			return c.Fail(StatusBadParam, "PRBS le 1: this port has no per-lane configuration (ls 0); set all lanes at once")
		}
		mode := c.Req("prbs_mode_admin")
		if mode > 31 || prbsModes&(1<<mode) == 0 {
			return c.Fail(StatusBadParam, "PRBS prbs_mode_admin 0x%x is not in prbs_modes_cap 0x%x", mode, prbsModes)
		}
		rateField := "lane_rate_oper"
		if tx {
			rateField = "lane_rate_admin"
		}
		rate := c.Req(rateField)
		if b, ok := prbsRateBit[rate]; !ok || prbsRateCap&(1<<b) == 0 {
			return c.Fail(StatusBadParam, "PRBS %s %d is not in lane_rate_cap 0x%x", rateField, rate, prbsRateCap)
		}
		side.on, side.mode, side.at = c.Req("e") == 1, uint8(mode), c.Now
		side.rate, side.modulation = uint16(rate), uint8(c.Req("modulation"))
		side.invert = c.Has("p") && c.Req("p") == 1
		f.relink(c.Now)
	}
	c.Put("lane_rate_cap", uint64(prbsRateCap))
	c.Put("modulation", side.modulation)
	if tx {
		c.Put("lane_rate_admin", side.rate)
	} else {
		c.Put("lane_rate_oper", side.rate)
	}
	c.Put("ls", 0)
	if c.Has("p_c") {
		c.Put("p_c", 1)
		c.Put("p", side.invert)
	}
	c.Put("e", side.on)
	c.Put("prbs_modes_cap", uint64(prbsModes))
	c.Put("prbs_mode_admin", side.mode)
	if tx {
		return StatusOK
	}
	var lock uint64
	if f.prbsLocked(p) {
		for l := 0; l < p.activeLanes() && l < 8; l++ {
			if laneBERNow(p, l) < prbsLockBER {
				lock |= 1 << l
			}
		}
	}
	c.Put("prbs_lock_status", lock&0xF)
	if c.Has("prbs_lock_status_ext") {
		c.Put("prbs_lock_status_ext", lock>>4&0xF)
	}
	return StatusOK
}

// prbsLocked says the checker finds its pattern on the port's lanes: both
// sides in test mode with the same pattern and polarity (p), over a
// trained link.
func (f *Firmware) prbsLocked(p *portState) bool {
	return p.up && p.prbs.tx.on && p.prbs.rx.on && p.prbs.tx.mode == p.prbs.rx.mode && p.prbs.tx.invert == p.prbs.rx.invert
}
