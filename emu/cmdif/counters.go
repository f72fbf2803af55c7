package cmdif

import "math"

// queryQCounter answers QUERY_Q_COUNTER from the RDMA model (emu/rdma),
// whose counter names are the layout's field names. The emulated driver
// allocated one counter set per local port: set N counts local port N.
// clear=1 reads and then zeroes the set, as the firmware does.
func (c *call) queryQCounter() {
	set := uint8(c.get("counter_set_id"))
	ports := c.ep.f.View.Ports()
	if set < 1 || int(set) > len(ports) {
		c.fail(statusBadParam, syndNoCounterSet)
		return
	}
	raw, err := c.ep.rdma.Counters(ports[set-1], c.now)
	if err != nil {
		c.internal(err)
		return
	}
	base := c.ep.cleared[set]
	fields := map[string]bool{}
	for _, l := range c.outPlan.Leaves() {
		fields[l.Path] = true
	}
	for name, v := range raw {
		if !fields[name] {
			continue // a counter the layout does not carry (the 64-bit congestion ones)
		}
		c.set(kv(name, (v-base[name])&math.MaxUint32))
	}
	if c.get("clear") == 1 {
		c.ep.cleared[set] = raw
	}
}
