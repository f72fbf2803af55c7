package adapter

import (
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/regpath"
)

// notMisread: a reading decoded by a revision that lacks the field gives
// either nothing or the value the built-in layout finds in the same
// bytes (valueOf's fallback), never another field's bits.
func notMisread(t *testing.T, db *prm.DB, p regpath.Path) {
	t.Helper()
	r, _ := db.Register(p.Register)
	old, err := db.RegisterPlan(r)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, old.Bytes)
	for i := range raw {
		raw[i] = byte(i*37 + 11) // distinct bytes, so a wrong offset shows
	}
	d, err := old.Decode(raw)
	if err != nil {
		t.Fatalf("%s %s: %v", db.Revision, p.Register, err)
	}
	got, ok := valueOf(d, p.Register, p.Path)
	if !ok {
		return
	}
	ref := Reference()
	rr, _ := ref.Register(p.Register)
	rp, _ := ref.RegisterPlan(rr)
	buf := make([]byte, max(rp.Bytes, len(raw)))
	copy(buf, raw)
	rd, err := rp.Decode(buf)
	if err != nil {
		t.Fatal(err)
	}
	want, err := rd.Get(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Raw(), got.Raw()); got.Uint() != want.Uint() || diff != "" {
		t.Errorf("%s %s %s: read %#x, the built-in layout gives %#x (-want +got raw):\n%s", db.Revision, p.Register, p.Path, got.Uint(), want.Uint(), diff)
	}
}

// missing says why db cannot find path of reg the way valueOf looks first
// (by name, then older spellings), "" when it can.
func missing(db *prm.DB, reg, path string) string {
	r, err := db.Register(reg)
	if err != nil {
		return "no register"
	}
	p, err := db.RegisterPlan(r)
	if err != nil {
		return "no layout: " + err.Error()
	}
	buf := p.NewBuffer()
	for _, s := range spellings(path) {
		if _, err := p.Resolve(s, buf); err == nil {
			return ""
		}
		if _, err := p.Resolve(s+"[0]", buf); err == nil {
			return "" // an array read whole (MCIA dword)
		}
	}
	return "no field"
}

// knownMissing are the generated paths some PRM revision of
// shared/prm-history does not have, as database findings: the register or
// field came in a later revision (or an older one lays the bits out
// without naming them). adapter.FieldOf reads such a field at the bits the
// built-in layout gives it, when the firmware sends them (fields.go).
var knownMissing = []string{
	// Rev 0.51 names MCQI's data but does not lay out its version page.
	"Rev 0.51 MCQI data.mcqi_version_ext.version_string: no field",
	// MPEIN link_peer_max_speed comes in Rev 0.56.
	"Rev 0.51 MPEIN link_peer_max_speed: no field",
	// Rev 0.51's PDDR module info page has four lanes of monitors and
	// lacks fields later revisions add (connector, OUI, date code, fiber
	// lengths, module state, monitor mask, rx_power_type): optics.FromPDDR
	// does without them there, as mlxlink does.
	"Rev 0.51 PDDR module_info_ext: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.connector_type: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.date_code: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.length_om2: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.length_om3: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.length_om4: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.length_om5: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.max_power: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.module_st: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.monitor_cap_mask: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.rx_power_lane4: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.rx_power_lane5: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.rx_power_lane6: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.rx_power_lane7: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.rx_power_type: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.smf_length: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.tx_bias_lane4: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.tx_bias_lane5: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.tx_bias_lane6: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.tx_bias_lane7: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.tx_power_lane4: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.tx_power_lane5: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.tx_power_lane6: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.tx_power_lane7: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.vendor_oui: no field",
	"Rev 0.51 PDDR page_data.pddr_module_info_ext.wavelength_tolerance: no field",
	// Rev 0.51 has PDDR's cable_proto_cap as undivided bits: the Ethernet
	// and InfiniBand members come in Rev 0.56.
	"Rev 0.51 PDDR page_data.pddr_operation_info_page_ext.cable_proto_cap.pddr_cable_cap_eth_ext.cable_ext_eth_proto_cap: no field",
	"Rev 0.51 PDDR page_data.pddr_operation_info_page_ext.cable_proto_cap.pddr_cable_cap_ib_ext.cable_link_speed_cap: no field",
	"Rev 0.51 PDDR page_data.pddr_operation_info_page_ext.cable_proto_cap.pddr_cable_cap_ib_ext.cable_link_width_cap: no field",
	// Rev 0.51 has lane0_module_mapping as one dword without its module
	// field (Rev 0.56 divides it; fields.go).
	"Rev 0.51 PMLP lane_module_mapping[0].module: no field",
	// Rev 0.51 does not lay out the extended (64-bit) InfiniBand port
	// counters by name (FieldOf reads them at the built-in layout's bits).
	"Rev 0.51 PPCNT counter_set.IB_long_portcntrs_attribute_grp_data_ext.excessive_buffer_overrun_errors: no field",
	"Rev 0.51 PPCNT counter_set.IB_long_portcntrs_attribute_grp_data_ext.link_downed_counter: no field",
	"Rev 0.51 PPCNT counter_set.IB_long_portcntrs_attribute_grp_data_ext.link_error_recovery_counter: no field",
	"Rev 0.51 PPCNT counter_set.IB_long_portcntrs_attribute_grp_data_ext.local_link_integrity_errors: no field",
	"Rev 0.51 PPCNT counter_set.IB_long_portcntrs_attribute_grp_data_ext.port_rcv_errors: no field",
	"Rev 0.51 PPCNT counter_set.IB_long_portcntrs_attribute_grp_data_ext.port_rcv_remote_physical_errors: no field",
	"Rev 0.51 PPCNT counter_set.IB_long_portcntrs_attribute_grp_data_ext.symbol_error_counter: no field",
	// Rev 0.51's physical-layer counters name FEC-corrected symbols for
	// lanes 0-3 (FieldOf reads 4-7 at the built-in layout's bits).
	"Rev 0.51 PPCNT counter_set.phys_layer_cntrs_ext.rs_fec_corrected_symbols_lane4: no field",
	"Rev 0.51 PPCNT counter_set.phys_layer_cntrs_ext.rs_fec_corrected_symbols_lane5: no field",
	"Rev 0.51 PPCNT counter_set.phys_layer_cntrs_ext.rs_fec_corrected_symbols_lane6: no field",
	"Rev 0.51 PPCNT counter_set.phys_layer_cntrs_ext.rs_fec_corrected_symbols_lane7: no field",
	// PPCNT's physical-layer statistical group counts effective errors
	// from Rev 0.56 on (phy_effective_errors_high/_low).
	"Rev 0.51 PPCNT counter_set.phys_layer_stat_cntrs_ext.phy_effective_errors: no field",
	// Rev 0.51's physical-layer statistics count raw errors for lanes 0-3
	// by name (FieldOf reads 4-7 at the built-in layout's bits).
	"Rev 0.51 PPCNT counter_set.phys_layer_stat_cntrs_ext.phy_raw_errors_lane4: no field",
	"Rev 0.51 PPCNT counter_set.phys_layer_stat_cntrs_ext.phy_raw_errors_lane5: no field",
	"Rev 0.51 PPCNT counter_set.phys_layer_stat_cntrs_ext.phy_raw_errors_lane6: no field",
	"Rev 0.51 PPCNT counter_set.phys_layer_stat_cntrs_ext.phy_raw_errors_lane7: no field",
	// Rev 0.51 has no symbol BER in the statistical group.
	"Rev 0.51 PPCNT counter_set.phys_layer_stat_cntrs_ext.symbol_ber_magnitude: no field",
	"Rev 0.51 PPCNT counter_set.phys_layer_stat_cntrs_ext.symbol_fec_ber_coef: no field",
	// PPHCR (the FEC histogram's configuration) comes in Rev 0.56.
	"Rev 0.51 PPHCR active_hist_type: no register",
	// PPHCR's bins come with the register in Rev 0.56.
	"Rev 0.51 PPHCR bin_range[0].high_val: no register",
	"Rev 0.51 PPHCR bin_range[0].low_val: no register",
	"Rev 0.51 PPHCR bin_range[10].high_val: no register",
	"Rev 0.51 PPHCR bin_range[10].low_val: no register",
	"Rev 0.51 PPHCR bin_range[11].high_val: no register",
	"Rev 0.51 PPHCR bin_range[11].low_val: no register",
	"Rev 0.51 PPHCR bin_range[12].high_val: no register",
	"Rev 0.51 PPHCR bin_range[12].low_val: no register",
	"Rev 0.51 PPHCR bin_range[13].high_val: no register",
	"Rev 0.51 PPHCR bin_range[13].low_val: no register",
	"Rev 0.51 PPHCR bin_range[14].high_val: no register",
	"Rev 0.51 PPHCR bin_range[14].low_val: no register",
	"Rev 0.51 PPHCR bin_range[15].high_val: no register",
	"Rev 0.51 PPHCR bin_range[15].low_val: no register",
	"Rev 0.51 PPHCR bin_range[1].high_val: no register",
	"Rev 0.51 PPHCR bin_range[1].low_val: no register",
	"Rev 0.51 PPHCR bin_range[2].high_val: no register",
	"Rev 0.51 PPHCR bin_range[2].low_val: no register",
	"Rev 0.51 PPHCR bin_range[3].high_val: no register",
	"Rev 0.51 PPHCR bin_range[3].low_val: no register",
	"Rev 0.51 PPHCR bin_range[4].high_val: no register",
	"Rev 0.51 PPHCR bin_range[4].low_val: no register",
	"Rev 0.51 PPHCR bin_range[5].high_val: no register",
	"Rev 0.51 PPHCR bin_range[5].low_val: no register",
	"Rev 0.51 PPHCR bin_range[6].high_val: no register",
	"Rev 0.51 PPHCR bin_range[6].low_val: no register",
	"Rev 0.51 PPHCR bin_range[7].high_val: no register",
	"Rev 0.51 PPHCR bin_range[7].low_val: no register",
	"Rev 0.51 PPHCR bin_range[8].high_val: no register",
	"Rev 0.51 PPHCR bin_range[8].low_val: no register",
	"Rev 0.51 PPHCR bin_range[9].high_val: no register",
	"Rev 0.51 PPHCR bin_range[9].low_val: no register",
	"Rev 0.51 PPHCR num_of_bins: no register",
	// Rev 0.51's PPLM has no override fields for the newest speed groups
	// (one lane at 100G and 200G, 400G on four lanes, 800G): the link
	// shows the groups the revision has.
	"Rev 0.51 PPLM fec_override_admin_100g_1x: no field",
	"Rev 0.51 PPLM fec_override_admin_200g_2x: no field",
	"Rev 0.51 PPLM fec_override_admin_400g_4x: no field",
	"Rev 0.51 PPLM fec_override_admin_800g_8x: no field",
	"Rev 0.51 PPLM fec_override_cap_100g_1x: no field",
	"Rev 0.51 PPLM fec_override_cap_200g_2x: no field",
	"Rev 0.51 PPLM fec_override_cap_400g_4x: no field",
	"Rev 0.51 PPLM fec_override_cap_800g_8x: no field",
	// Rev 0.51's PPRT and PPTT have no polarity inversion (p, p_c): link
	// --test_mode EN refuses --invert_*_polarity there as a database
	// finding and writes no polarity.
	"Rev 0.51 PPRT p: no field",
	"Rev 0.51 PPRT p_c: no field",
	// Rev 0.51's PPRT gives the PRBS lock of lanes 0-3 only: the PRBS run
	// says lanes 4-7 are not known (linkctl).
	"Rev 0.51 PPRT prbs_lock_status_ext: no field",
	"Rev 0.51 PPTT p: no field",
	"Rev 0.51 PPTT p_c: no field",
	// SLRED (the margin scan) comes in Rev 0.56: link --margin refuses it
	// as a database finding.
	"Rev 0.51 SLRED page_data.slred_info_page_ext.margin: no register",
	"Rev 0.51 SLRED page_data.slred_info_page_ext.margin_version: no register",
	"Rev 0.51 SLRED status: no register",
	// Rev 0.51's SLRG has no 7 nm page, and its 16 nm page has the grade
	// but not the three eyes' grades.
	"Rev 0.51 SLRG page_data.slrg_16nm_ext.dn_eye_grade: no field",
	"Rev 0.51 SLRG page_data.slrg_16nm_ext.mid_eye_grade: no field",
	"Rev 0.51 SLRG page_data.slrg_16nm_ext.up_eye_grade: no field",
	"Rev 0.51 SLRG page_data.slrg_7nm_ext.last_fom: no field",
	"Rev 0.51 SLRG page_data.slrg_7nm_ext.lower_eye: no field",
	"Rev 0.51 SLRG page_data.slrg_7nm_ext.mid_eye: no field",
	"Rev 0.51 SLRG page_data.slrg_7nm_ext.upper_eye: no field",
	"Rev 0.56 PPCNT counter_set.phys_layer_cntrs_ext.rs_fec_corrected_symbols_lane4: no field",
	"Rev 0.56 PPCNT counter_set.phys_layer_cntrs_ext.rs_fec_corrected_symbols_lane5: no field",
	"Rev 0.56 PPCNT counter_set.phys_layer_cntrs_ext.rs_fec_corrected_symbols_lane6: no field",
	"Rev 0.56 PPCNT counter_set.phys_layer_cntrs_ext.rs_fec_corrected_symbols_lane7: no field",
	// Rev 0.59 on call the symbol BER's coefficient symbol_ber_coef, at
	// the same bits (notMisread checks them).
	"Rev 0.59 PPCNT counter_set.phys_layer_stat_cntrs_ext.symbol_fec_ber_coef: no field",
	"Rev 0.61 PPCNT counter_set.phys_layer_stat_cntrs_ext.symbol_fec_ber_coef: no field",
	"Rev 0.62 PPCNT counter_set.phys_layer_stat_cntrs_ext.symbol_fec_ber_coef: no field",
	"Rev 0.64 PPCNT counter_set.phys_layer_stat_cntrs_ext.symbol_fec_ber_coef: no field",
}

// Every generated path resolves in the built-in database, and in each
// revision of the history unless it is a listed database finding; a
// listed finding that a revision no longer shows is an error too, so the
// list stays true.
func TestPathsInEveryRevision(t *testing.T) {
	ref := Reference()
	if ref == nil {
		t.Fatal("the built-in database does not load")
	}
	for _, p := range regpath.All {
		if why := missing(ref, p.Register, p.Path); why != "" {
			t.Errorf("regpath.%s (%s %s) is not in the built-in database: %s", p.Name, p.Register, p.Path, why)
		}
	}
	files, _ := filepath.Glob(filepath.Join(prmhistorytest.Require(t), "hca-ext-rev*.adb"))
	if len(files) < 7 {
		t.Fatalf("found %d revisions, want the 7 of shared/prm-history", len(files))
	}
	var got []string
	for _, f := range files {
		db, err := adb.LoadFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, p := range regpath.All {
			if why := missing(db, p.Register, p.Path); why != "" {
				got = append(got, db.Revision+" "+p.Register+" "+p.Path+": "+why)
				if why == "no field" {
					notMisread(t, db, p)
				}
			}
		}
	}
	sort.Strings(got)
	if d := cmp.Diff(knownMissing, got); d != "" {
		t.Errorf("paths missing in a revision differ from the listed database findings (-listed +found):\n%s", d)
	}
}
