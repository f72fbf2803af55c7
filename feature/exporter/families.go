package exporter

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// family is one metric family: name, help, type and label names (device
// first in every family but the exporter's own).
type family struct {
	name   string
	help   string
	typ    prometheus.ValueType
	labels []string
}

func gauge(name, help string, labels ...string) family {
	return family{name, help, prometheus.GaugeValue, labels}
}

func counter(name, help string, labels ...string) family {
	return family{name, help, prometheus.CounterValue, labels}
}

// Families of the exporter itself; they are never filtered out.
var (
	famUp = gauge("cxray_device_up",
		"1 when the device answered within the scrape's deadline (at least one collector succeeded), 0 when it did not: gone, timed out, busy with a previous read, or every read failed.",
		"device", "backend")
	famSuccess = gauge("cxray_scrape_collector_success",
		"1 when the collector read everything it reads on the device in this scrape, 0 when a read failed or the deadline came first.",
		"device", "collector")
	famDuration = gauge("cxray_scrape_collector_duration_seconds",
		"How long the collector took on the device in this scrape.",
		"device", "collector")
	famErrors = counter("cxray_scrape_collector_errors_total",
		"Scrapes in which the collector failed on the device (read errors, timeouts, device busy), since the exporter started.",
		"device", "collector")
	famDeviceDuration = gauge("cxray_scrape_device_duration_seconds",
		"How long the device took to read in this scrape (up to the deadline).",
		"device")
	famBuild = gauge("cxray_exporter_build_info",
		"The cxray version serving these metrics.",
		"version")
)

// Families of the identity collector.
var (
	famInfo = gauge("cxray_device_info",
		"Identity of the device (value 1): model, PCI device ID (and as mlx5_ib's hca_type), PSID, running and stored firmware, adapter part number, GUIDs, its names (RDMA device, PCI address, first interface: what device is joined on). A label the backend cannot tell is left out.",
		"device", "backend", "model", "device_id", "hca_type", "psid", "firmware_version", "firmware_stored_version", "part_number",
		"node_guid", "sys_image_guid", "hw_rev", "node_desc", "rdma", "pci", "netdev")
	famPending = gauge("cxray_device_firmware_pending",
		"1 when the firmware in flash differs from the running one (it runs after the next reset), 0 when they agree.",
		"device")
	famNetdev = gauge("cxray_netdev_info",
		"A network interface of the device (value 1) with its current and permanent MAC and operational state.",
		"device", "netdev", "address", "permanent_address", "operstate")
	famNetdevChanged = gauge("cxray_netdev_address_changed",
		"1 when the interface's current MAC differs from its permanent one (set by a bond, a VM setup or an administrator).",
		"device", "netdev")
)

// Families of the temperature collector (the firmware's sensors: MTMP, or
// the mlx5 hwmon device).
var (
	famTemp = gauge("cxray_temperature_celsius",
		"Temperature of a firmware sensor: the ASIC, or a module as the adapter firmware reads it.",
		"device", "sensor", "kind", "module")
	famTempHighest = gauge("cxray_temperature_highest_celsius",
		"Highest temperature the sensor recorded since tracking was enabled or reset.",
		"device", "sensor", "kind", "module")
	famTempThreshold = gauge("cxray_temperature_threshold_celsius",
		"The firmware's warning thresholds of the sensor (threshold=high or low).",
		"device", "sensor", "kind", "module", "threshold")
)

// Families of the port collector.
var (
	famPortInfo = gauge("cxray_port_info",
		"A port of the device (value 1): its link layer, interface and module cage when known.",
		"device", "port", "link_layer", "netdev", "module")
	famPortUp = gauge("cxray_port_up",
		"1 when the port's link is up (PAOS oper_status up; kernel: physical state LinkUp).",
		"device", "port")
	famPortAdminUp = gauge("cxray_port_admin_up",
		"1 when the port is administratively up (PAOS admin_status).",
		"device", "port")
	famPortSpeed = gauge("cxray_port_speed_bytes_per_second",
		"Operating speed of the link in bytes per second (0 while down). 400 Gb/s is 5e10.",
		"device", "port")
	famPortLanes = gauge("cxray_port_lanes",
		"Lanes the port uses (PMLP width; kernel: the link width).",
		"device", "port")
	famPortState = gauge("cxray_port_state",
		"InfiniBand port state as the kernel shows it: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER.",
		"device", "port")
	famPortWidth = gauge("cxray_port_link_width_lanes",
		"Lanes an InfiniBand link trained to (PTYS ib_link_width_oper; kernel: the width of the rate); fewer than cxray_port_lanes is a degraded link.",
		"device", "port")
	famPortPhysState = gauge("cxray_port_phys_state",
		"InfiniBand physical port state as the kernel shows it: 1 Sleep, 2 Polling, 3 Disabled, 4 PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery, 7 PhyTest.",
		"device", "port")
)

// Families of the module collector (digital diagnostics of the pluggable
// module of each port).
var (
	famModPresent = gauge("cxray_module_present",
		"1 when a module is plugged in the port's cage, 0 when the cage is empty.",
		"device", "port")
	famModInfo = gauge("cxray_module_info",
		"The module of the port (value 1): cage, where the values come from (source=eeprom: the module's own memory; firmware: the adapter's view, PDDR page 3), memory map, identifier, vendor, part and serial number, revision, media.",
		"device", "port", "module", "source", "standard", "identifier", "vendor", "part_number", "serial_number", "revision", "media")
	famModStatus = gauge("cxray_module_status_info",
		"The firmware's state of the module in the port's cage (value 1; PMAOS): oper_status (plugged_enabled, unplugged, module_plugged_with_error, plugged_disabled) and, for a module with an error, error_type (High_Temperature, Bus_stuck, Power_Budget_Exceeded ...).",
		"device", "port", "oper_status", "error_type")
	famModError = gauge("cxray_module_error",
		"1 when the firmware reports the module plugged with an error (cxray_module_status_info's error_type says which), 0 otherwise.",
		"device", "port")
	famModDDM = gauge("cxray_module_ddm",
		"1 when the module implements digital diagnostics (temperature, voltage, bias and powers), 0 when it does not (passive copper cables).",
		"device", "port")
	famModNoReading = gauge("cxray_module_no_reading",
		"1 for a module monitor that answered its field's no-reading pattern (all ones, as a hung I2C bus reads; pattern says which): the reading is left out of the other metrics.",
		"device", "port", "quantity", "lane", "pattern")
	famModTemp = gauge("cxray_module_temperature_celsius",
		"Module temperature from its diagnostics.", "device", "port")
	famModVolt = gauge("cxray_module_voltage_volts",
		"Module supply voltage from its diagnostics.", "device", "port")
	famModBias = gauge("cxray_module_tx_bias_amperes",
		"Laser bias current of a lane (1 mA is 0.001).", "device", "port", "lane")
	famModTxW = gauge("cxray_module_tx_power_watts",
		"Transmitted optical power of a lane (1 mW is 0.001).", "device", "port", "lane")
	famModTxDBm = gauge("cxray_module_tx_power_dbm",
		"Transmitted optical power of a lane in dBm (-Inf when the lane reads zero).", "device", "port", "lane")
	famModRxW = gauge("cxray_module_rx_power_watts",
		"Received optical power of a lane (average, or OMA when the module says so).", "device", "port", "lane")
	famModRxDBm = gauge("cxray_module_rx_power_dbm",
		"Received optical power of a lane in dBm (-Inf when no light arrives).", "device", "port", "lane")

	famModTempTh = gauge("cxray_module_temperature_threshold_celsius",
		"The module's own temperature thresholds (threshold=high_alarm, high_warning, low_warning, low_alarm).",
		"device", "port", "threshold")
	famModVoltTh = gauge("cxray_module_voltage_threshold_volts",
		"The module's own supply voltage thresholds.", "device", "port", "threshold")
	famModBiasTh = gauge("cxray_module_tx_bias_threshold_amperes",
		"The module's own laser bias thresholds (one set for every lane).", "device", "port", "threshold")
	famModTxWTh = gauge("cxray_module_tx_power_threshold_watts",
		"The module's own Tx power thresholds.", "device", "port", "threshold")
	famModTxDBmTh = gauge("cxray_module_tx_power_threshold_dbm",
		"The module's own Tx power thresholds in dBm.", "device", "port", "threshold")
	famModRxWTh = gauge("cxray_module_rx_power_threshold_watts",
		"The module's own Rx power thresholds.", "device", "port", "threshold")
	famModRxDBmTh = gauge("cxray_module_rx_power_threshold_dbm",
		"The module's own Rx power thresholds in dBm.", "device", "port", "threshold")

	famModAlarm = gauge("cxray_module_alarm",
		"1 when the module's latched alarm flag of a module-wide quantity (temperature, voltage) is set, per direction (high, low).",
		"device", "port", "quantity", "direction")
	famModWarning = gauge("cxray_module_warning",
		"1 when the module's latched warning flag of a module-wide quantity is set.",
		"device", "port", "quantity", "direction")
	famLaneAlarm = gauge("cxray_module_lane_alarm",
		"1 when the module's latched alarm flag of a lane quantity (tx_bias, tx_power, rx_power) is set, per direction.",
		"device", "port", "lane", "quantity", "direction")
	famLaneWarning = gauge("cxray_module_lane_warning",
		"1 when the module's latched warning flag of a lane quantity is set.",
		"device", "port", "lane", "quantity", "direction")
	famLaneSignal = gauge("cxray_module_lane_signal",
		"1 when a lane signal is raised: tx_fault, tx_los, rx_los (loss of signal), tx_cdr_lol, rx_cdr_lol (CDR loss of lock).",
		"device", "port", "lane", "signal")
)

// counterFamily names the metric of a counter: the families of the counters
// and rdma collectors are made from the counter names the backend reports,
// so a newer firmware or driver adds metrics without a new cxray.
//
//	ppcnt  PPCNT field            cxray_ppcnt_<field>_total; octet counters
//	                              cxray_ppcnt_<field>_bytes_total;
//	                              time_since_last_clear is a gauge in seconds
//	ib     counters/<name>        cxray_ib_<name>_total; port_xmit_data and
//	                              port_rcv_data (4-octet units) become
//	                              cxray_ib_<name>_bytes_total in bytes
//	rdma   hw_counters/<name>     cxray_rdma_<name>_total
//
// A counter of one lane (PPCNT's rs_fec_corrected_symbols_lane3,
// edpl_bip_errors_lane0 ...) is a sample of the family
// cxray_ppcnt_<field>_per_lane_total with the lane as a label (lane="3", the
// PRM's numbering from 0): one family per quantity, not one per lane, and
// apart from the field's own total (rs_fec_corrected_symbols_total) so a
// family keeps one set of labels. A field already ending in _total gets no
// second one.
//
// scale converts the reported value to the metric's unit; lane is the
// lane label's value, "" for a counter of the whole port.
func counterFamily(kind, name string) (f family, scale float64, lane string) {
	n := strings.TrimSuffix(sanitize(name), "_total")
	labels := []string{"device", "port"}
	perLane := ""
	if m := laneSuffix.FindStringSubmatch(n); m != nil {
		n, lane, perLane = m[1], m[2], "_per_lane"
		labels = append(labels, "lane")
		name += " (per lane)"
	}
	switch kind {
	case "ppcnt":
		switch {
		case n == "time_since_last_clear" && lane == "":
			return gauge("cxray_ppcnt_time_since_last_clear_seconds",
				"Time since the port's PPCNT physical-layer counters were last cleared.", labels...), 0.001, ""
		case strings.Contains(n, "octets"):
			return counter("cxray_ppcnt_"+n+perLane+"_bytes_total",
				fmt.Sprintf("PPCNT %s counter %s, in bytes (register PPCNT, per port).", ppcntGroup(n), name), labels...), 1, lane
		}
		return counter("cxray_ppcnt_"+n+perLane+"_total",
			fmt.Sprintf("PPCNT %s counter %s (register PPCNT, per port).", ppcntGroup(n), name), labels...), 1, lane
	case "ib":
		if (n == "port_xmit_data" || n == "port_rcv_data") && lane == "" {
			return counter("cxray_ib_"+n+"_bytes_total",
				fmt.Sprintf("InfiniBand port counter %s in bytes (PPCNT's InfiniBand groups or sysfs counters/%s, which count 4-octet words).", name, name), labels...), 4, ""
		}
		return counter("cxray_ib_"+n+perLane+"_total",
			fmt.Sprintf("InfiniBand port counter %s (PPCNT's InfiniBand groups, or sysfs ports/N/counters/%s).", name, name), labels...), 1, lane
	}
	help := rdmaHelp[name]
	if help == "" {
		help = "mlx5 RDMA hardware counter " + name + " (hw_counters/" + name + ")."
	}
	return counter("cxray_rdma_"+n+perLane+"_total", help, labels...), 1, lane
}

// laneSuffix finds a lane number at the end of a counter name.
var laneSuffix = regexp.MustCompile(`^(.+)_lane_?(\d+)$`)

// ppcntGroup names the group a PPCNT field comes from, for help texts.
func ppcntGroup(field string) string {
	switch {
	case strings.HasPrefix(field, "a_"):
		return "IEEE 802.3"
	case strings.HasPrefix(field, "if_"):
		return "RFC 2863"
	}
	return "physical-layer"
}

// rdmaHelp explains the RDMA counters people alert on (after NVIDIA's
// counter descriptions, in our words).
var rdmaHelp = map[string]string{
	"out_of_sequence":            "RoCE: packets received out of sequence (a gap: something was lost on the way in). Q counter, 32 bits: wraps at 2^32.",
	"duplicate_request":          "RoCE: duplicate requests received (the peer retransmitted a packet this side already had). Q counter, 32 bits.",
	"packet_seq_err":             "RoCE: NAK sequence errors received (the peer saw a gap in what this side sent). Q counter, 32 bits.",
	"implied_nak_seq_err":        "RoCE: ACKs whose PSN was beyond the expected one (an implied NAK). Q counter, 32 bits.",
	"local_ack_timeout_err":      "RoCE: the ACK timer expired on a QP (RC, XRC, DCT) and the sender retransmitted. Q counter, 32 bits.",
	"rnr_nak_retry_err":          "RoCE: receiver-not-ready NAKs received (retry limit not exceeded). Q counter, 32 bits.",
	"roce_adp_retrans":           "RoCE adaptive retransmission: retransmissions by the adaptive timer. 32 bits.",
	"roce_adp_retrans_to":        "RoCE adaptive retransmission: timeouts during adaptive retransmission. 32 bits.",
	"roce_slow_restart":          "RoCE slow restart: times a QP entered slow restart. 32 bits.",
	"roce_slow_restart_cnps":     "RoCE slow restart: CNPs received during slow restart. 32 bits.",
	"roce_slow_restart_trans":    "RoCE slow restart: state transitions of slow restart. 32 bits.",
	"rx_write_requests":          "RDMA WRITE requests received. Q counter, 32 bits.",
	"rx_read_requests":           "RDMA READ requests received. Q counter, 32 bits.",
	"rx_atomic_requests":         "Atomic requests received. Q counter, 32 bits.",
	"out_of_buffer":              "Packets dropped because no receive WQE was posted. Q counter, 32 bits.",
	"np_cnp_sent":                "Congestion: CNPs sent by the notification point. 64 bits.",
	"rp_cnp_handled":             "Congestion: CNPs handled by the reaction point. 64 bits.",
	"rp_cnp_ignored":             "Congestion: CNPs ignored by the reaction point. 64 bits.",
	"np_ecn_marked_roce_packets": "Congestion: ECN-marked RoCE packets received. 64 bits.",
}

// sanitize makes a counter name a valid, lower-case metric name part.
func sanitize(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
