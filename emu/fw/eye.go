package fw

import (
	"time"

	"github.com/cxray/cxray/emu"
)

// eyeScan is one lane's SLRED margin scan: the last one a host started.
type eyeScan struct {
	started  bool
	at       time.Time     // when en was written
	measure  uint64        // SLRED measure_time code
	eye      uint64        // SLRED eye_sel (PAM4 only)
	destruct uint64        // SLRED destructive_ctrl, kept for the read-back
	upEvents uint64        // the link's up count at the start: a retrain aborts the scan
	status   uint64        // slredUnsupported or slredError when it could not start
	lasts    time.Duration // the measure time
}

// SLRED status values (the PRM's SLRED status field).
const (
	slredNotPerformed = 0
	slredUnsupported  = 1
	slredPerforming   = 3
	slredCompleted    = 4
	slredError        = 5
)

// slredSeconds are SLRED measure_time's codes 0..8, in seconds.
var slredSeconds = []int{10, 30, 60, 90, 120, 240, 480, 600, 900}

// slredLaneSpeed is SLRED lane_speed for a lane rate in Gb/s: the PRM names
// 10.3125 (3), 25.78125 (5) and 53.125 Gb/s (6) lanes and nothing faster,
// so a faster lane (400G over 4 lanes, NDR) is a scan the speed does not
// support.
func slredLaneSpeed(gbps float64) (uint64, bool) {
	switch {
	case gbps <= 0:
		return 0, false
	case gbps <= 10.5:
		return 3, true
	case gbps <= 14.1:
		return 4, true
	case gbps <= 26:
		return 5, true
	case gbps <= 54:
		return 6, true
	}
	return 0, false
}

// SLRED: serdes lane receive eye diagram, here its margin scan: a SET with
// en starts a scan of one lane (and, on a PAM4 lane, one eye) that runs
// measure_time on the firmware clock; a GET of the info page (page_data_sel
// 0) says performing until then, then completed with the margin, the same
// eye opening SLRG reports from the lane's raw BER. A link that is down,
// or retrains during the scan, ends it in error; a lane faster than
// lane_speed can name is unsupported. The eye diagram pages
// (page_data_sel 1..7) are not modelled.
func (f *Firmware) slred(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	if c.Has("pnat") && c.Req("pnat") > 1 {
		return c.Fail(StatusBadParam, "SLRED pnat %d: the emulator scans network ports only", c.Req("pnat"))
	}
	lane := int(c.Req("lane"))
	if lane >= int(p.width) || lane >= len(p.scans) {
		return c.Fail(StatusBadParam, "SLRED lane %d: the port has lanes 0..%d", lane, int(p.width)-1)
	}
	if sel := c.Req("page_data_sel"); sel != 0 {
		return c.Fail(StatusBadParam, "SLRED page_data_sel %d: the emulator keeps the info page (0) only, no eye diagram", sel)
	}
	s := &p.scans[lane]
	rate := 0.0
	if p.up {
		rate = operGbps(p) / float64(max(p.activeLanes(), 1))
	}
	speed, named := slredLaneSpeed(rate)
	if c.Method == emu.MethodSet {
		if c.Req("abort") == 1 && c.Req("en") == 1 {
			return c.Fail(StatusBadParam, "SLRED: abort and en cannot be set together")
		}
		if c.Req("abort") == 1 {
			*s = eyeScan{}
		}
		if c.Req("en") == 1 {
			mt := c.Req("measure_time")
			if mt >= uint64(len(slredSeconds)) {
				return c.Fail(StatusBadParam, "SLRED measure_time %d: codes 0..%d (10 s .. 900 s)", mt, len(slredSeconds)-1)
			}
			*s = eyeScan{started: true, at: c.Now, measure: mt, eye: c.Req("eye_sel"), destruct: c.Req("destructive_ctrl"),
				upEvents: p.upEvents, lasts: time.Duration(slredSeconds[mt]) * time.Second}
			switch {
			case !p.up || lane >= p.activeLanes():
				s.status = slredError
			case !named:
				s.status = slredUnsupported
			}
		}
	}
	c.Put("version", 4)
	c.Put("lane_speed", speed)
	c.Put("measure_time", s.measure)
	c.Put("eye_sel", s.eye)
	c.Put("destructive_ctrl", s.destruct)
	status := uint64(slredNotPerformed)
	switch {
	case !s.started:
	case s.status != 0:
		status = s.status
	case !p.up || p.upEvents != s.upEvents:
		status = slredError
	case c.Now.Sub(s.at) < s.lasts:
		status = slredPerforming
	default:
		status = slredCompleted
	}
	c.Put("status", status)
	if status != slredCompleted {
		return StatusOK
	}
	eye := eyeOf(laneBERNow(p, lane))
	margin := eye
	if rate > 26 { // PAM4: the upper and lower eyes are smaller, as SLRG has them
		switch s.eye {
		case 0:
			margin = eye - eye/10
		case 2:
			margin = eye - eye/8
		}
	}
	const pre = "page_data.slred_info_page_ext."
	c.Put(pre+"margin_version", 1)
	c.Put(pre+"margin", margin)
	return StatusOK
}
