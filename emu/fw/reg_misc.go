package fw

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cxray/cxray/emu"
)

// MTCAP: which sensors exist. Only the ASIC sensors count; module sensors
// (64+) are not listed, as the PRM says.
func (f *Firmware) mtcap(c *Call) uint8 {
	if si := c.Req("slot_index"); si != 0 {
		return c.Fail(StatusBadParam, "slot_index %d: an adapter has no line cards (use 0)", si)
	}
	var count int
	var bitmap uint64
	for idx := range f.sensors {
		if idx < moduleSensorBase {
			count++
			bitmap |= 1 << idx
		}
	}
	c.Put("sensor_count", count)
	c.Put("internal_sensor_count", count)
	c.Put("sensor_map", bitmap)
	return StatusOK
}

// MTMP: one sensor's temperature, maximum and thresholds.
func (f *Firmware) mtmp(c *Call) uint8 {
	if si := c.Req("slot_index"); si != 0 {
		return c.Fail(StatusBadParam, "slot_index %d: an adapter has no line cards (use 0)", si)
	}
	idx := int(c.Req("sensor_index"))
	s := f.sensors[idx]
	if s == nil {
		return c.Fail(StatusBadParam, "sensor_index %d does not exist (0 is the ASIC, 64..%d the modules)", idx, moduleSensorBase+len(f.modules)-1)
	}
	f.sample(s, c.Now)
	if c.Method == emu.MethodSet {
		s.mte = c.Req("mte") != 0
		if c.Req("mtr") != 0 || !s.mte {
			s.maxValid = false
			f.sample(s, c.Now)
		}
		s.hiRaw = signed16(c.Req("temperature_threshold_hi"))
		s.loRaw = signed16(c.Req("temperature_threshold_lo"))
		s.tee = uint8(c.Req("tee"))
		s.sdee = uint8(c.Req("sdee"))
	}
	// A sensor without a reading (an empty cage, an unreachable module)
	// answers 0 for both, the "no reading" the drivers know
	// (drivers/net/ethernet/mellanox/mlx5/core/hwmon.c).
	cur, ok := f.reading(s, c.Now)
	if ok {
		c.Put("temperature", cur)
	}
	if s.mte {
		c.Put("mte", true)
		if s.maxValid && ok {
			c.Put("max_temperature", s.maxRaw)
		}
	}
	c.Put("temperature_threshold_hi", s.hiRaw)
	c.Put("temperature_threshold_lo", s.loRaw)
	c.Put("tee", s.tee)
	c.Put("sdee", s.sdee)
	if s.name != "" {
		c.Put("sensor_name", s.name)
	}
	return StatusOK
}

// signed16 reads a 16-bit two's-complement field.
func signed16(v uint64) int64 { return int64(int16(uint16(v))) }

// roceState is ROCE_ACCL: which features exist and which are on.
type roceState struct {
	features []roceFeature
}

type roceFeature struct {
	name      string // base name ("roce_adp_retrans")
	selectFld string // "<name>_field_select"
	enableFld string // the enable bit
	supported bool
	enabled   bool
}

// buildRoCE finds the feature pairs in the database layout: every
// "X_field_select" field selects the enable bit "X_en" or "X".
func (f *Firmware) buildRoCE() error {
	r, err := f.db.Register("ROCE_ACCL")
	if err != nil {
		if len(f.spec.RoCE.Supported) > 0 {
			return fmt.Errorf("RoCE features are listed but the database has no ROCE_ACCL register")
		}
		return nil
	}
	ri := f.regs[uint16(r.ID)]
	if ri == nil {
		return nil
	}
	names := map[string]bool{}
	for _, l := range ri.plan.Leaves() {
		names[l.Path] = true
	}
	for _, l := range ri.plan.Leaves() {
		base, ok := strings.CutSuffix(l.Path, "_field_select")
		if !ok || strings.Contains(base, ".") {
			continue
		}
		en := base + "_en"
		if !names[en] {
			en = base
		}
		if !names[en] {
			continue
		}
		f.roce.features = append(f.roce.features, roceFeature{name: base, selectFld: l.Path, enableFld: en})
	}
	sort.Slice(f.roce.features, func(i, j int) bool { return f.roce.features[i].name < f.roce.features[j].name })
	find := func(n string) *roceFeature {
		for i := range f.roce.features {
			if f.roce.features[i].name == n {
				return &f.roce.features[i]
			}
		}
		return nil
	}
	known := func() string {
		var ns []string
		for _, ft := range f.roce.features {
			ns = append(ns, ft.name)
		}
		return strings.Join(ns, ", ")
	}
	for _, n := range f.spec.RoCE.Supported {
		ft := find(n)
		if ft == nil {
			return fmt.Errorf("RoCE feature %q is not in ROCE_ACCL; known: %s", n, known())
		}
		ft.supported = true
	}
	for _, n := range f.spec.RoCE.Enabled {
		ft := find(n)
		if ft == nil || !ft.supported {
			return fmt.Errorf("RoCE feature %q is enabled but not supported; list it under supported (known: %s)", n, known())
		}
		ft.enabled = true
	}
	return nil
}

// ROCE_ACCL: on query each *_field_select bit says whether the feature
// exists; on set it says which enable bits the request means to change.
func (f *Firmware) roceAccl(c *Call) uint8 {
	if c.Method == emu.MethodSet {
		for i := range f.roce.features {
			ft := &f.roce.features[i]
			if c.Req(ft.selectFld) == 0 {
				continue
			}
			if !ft.supported {
				return c.Fail(StatusBadParam, "ROCE_ACCL %s is not supported by this adapter", ft.name)
			}
		}
		for i := range f.roce.features {
			ft := &f.roce.features[i]
			if c.Req(ft.selectFld) != 0 {
				ft.enabled = c.Req(ft.enableFld) != 0
			}
		}
	}
	for _, ft := range f.roce.features {
		c.Put(ft.selectFld, ft.supported)
		c.Put(ft.enableFld, ft.supported && ft.enabled)
	}
	return StatusOK
}

// RoCEFeatures reports each ROCE_ACCL feature: supported, enabled.
func (f *Firmware) RoCEFeatures() map[string][2]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][2]bool{}
	for _, ft := range f.roce.features {
		out[ft.name] = [2]bool{ft.supported, ft.enabled}
	}
	return out
}

// PGUID: the GUIDs of a port. The 128-bit fields carry the 64-bit GUID in
// their low half (elements 2 and 3). Each PF is a node of its own (its
// RDMA device's node GUID), so the node and port GUIDs follow the port;
// only the system image GUID, the adapter's base, is shared (see
// Spec.NodeGUID).
func (f *Firmware) pguid(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	if c.Method == emu.MethodSet {
		return c.Fail(StatusBadParam, "PGUID is read-only: the GUIDs come from the board's NV configuration")
	}
	put := func(field string, guid uint64) {
		c.Put(field+"[2]", guid>>32)
		c.Put(field+"[3]", guid&0xffffffff)
	}
	node := f.spec.NodeGUID(p.local)
	put("sys_guid", f.spec.BaseGUID)
	put("node_guid", node)
	put("port_guid", node)
	return StatusOK
}

// Flash parameters MFPA reports: one 32 MB Macronix 3 V SPI flash
// (JEDEC C2 20 19; the register holds the ID bytes in reverse order, as
// mstflint's mflash reads them) with 4 KB sectors (log2 of KB). mstflint's
// flash layer, which its clear_semaphore opens, needs a known flash.
const (
	mfpaJEDEC      = 0x1920C2
	mfpaSectorLog2 = 2
)

// mfpa answers the flash parameters of bank 0 (the only flash); SET keeps
// the RW boot_address.
func (f *Firmware) mfpa(c *Call) uint8 {
	if fs := c.Req("fs"); fs != 0 {
		return c.Fail(StatusBadParam, "MFPA fs %d: the adapter has one flash (fs 0)", fs)
	}
	if c.Method == emu.MethodSet {
		return c.Generic()
	}
	if st := c.Generic(); st != StatusOK {
		return st
	}
	c.Put("flash_num", 1)
	c.Put("jedec_id", mfpaJEDEC)
	c.Put("sector_size", mfpaSectorLog2)
	return StatusOK
}
