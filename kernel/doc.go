// Package kernel is cxray's read-only kernel backend: what the running
// mlx5_core and mlx5_ib drivers already expose about a ConnectX function,
// read without touching the PCI config space. It is what `-d kernel:mlx5_0`
// selects and what the exporter falls back to when direct access is not
// possible (no root, kernel lockdown, a container).
//
// Sources and the privilege each needs (the kernel's: file modes in
// drivers/infiniband/core/sysfs.c and drivers/hwmon/, and the netlink
// operations' flags in net/devlink/netlink_gen.c and net/ethtool/netlink.c):
//
//	what                          where                                              privilege
//	identity, firmware version    /sys/class/infiniband/<dev>/{fw_ver,node_guid,      none
//	                              sys_image_guid,board_id,hca_type,hw_rev,
//	                              node_desc,node_type}
//	port state, rate, counters    .../ports/<n>/{state,phys_state,rate,link_layer,    none
//	                              lid,sm_lid,counters/*,hw_counters/*}
//	device hw counters            /sys/class/infiniband/<dev>/hw_counters/*           none
//	ASIC and module temperature   <pci function>/hwmon/hwmon*/temp*_{input,label,     none
//	                              highest,crit} (hwmon device named "mlx5")
//	PSID, running/stored firmware devlink DEVLINK_CMD_INFO_GET (generic netlink)      none
//	current MAC                   /sys/class/net/<if>/address, addr_assign_type       none
//	permanent MAC                 rtnetlink RTM_GETLINK, IFLA_PERM_ADDRESS            none
//	module EEPROM pages           ethtool netlink ETHTOOL_MSG_MODULE_EEPROM_GET       CAP_NET_ADMIN
//	PCIe link, AER counters       <pci function>/{current,max}_link_{speed,width},      none
//	                              aer_dev_*, and the parent bridge's link (pcie.go)
//	health reporters              devlink DEVLINK_CMD_HEALTH_REPORTER_GET             none
//	reporter diagnose (fw: the    devlink DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE        CAP_NET_ADMIN
//	firmware syndrome)
//	driver statistics (ethtool -S) SIOCETHTOOL ETHTOOL_GSTRINGS / ETHTOOL_GSTATS       none
//
// Module memory is read one request at a time (ReadModuleEEPROM), or as the
// set of pages the optics package asks for: ModuleReader is an
// optics.PageReader over ethtool netlink, and Module reads and decodes a
// module the same way the register path does over MCIA, so both decodes
// can be compared. Without CAP_NET_ADMIN the error is a *PermissionError
// that says how to get it (root, or setcap cap_net_admin+ep).
//
// The backend never writes: not to sysfs (hw_counters/lifespan and
// tempN_reset_history are writable by root, and are left alone), not to
// netlink (only GET requests are sent), and not to registers. Every write
// entry point returns a *ReadOnlyError (errors.Is(err, ErrReadOnly)) whose
// message tells the user to use direct access instead.
//
// Every call takes a context. Sysfs attributes backed by firmware (hardware
// counters, temperatures) block inside the kernel until the firmware answers;
// such a read cannot be interrupted, so it runs in its own goroutine and the
// caller gets ctx.Err() when the context ends first. Netlink sockets get the
// context's deadline, and are unblocked when the context is cancelled.
//
// Options.Root points the backend at a fake sysfs tree (tests, the
// emulator), Options.DialGeneric / DialRoute inject fake netlink
// connections and Options.Ethtool a fake SIOCETHTOOL; package kerneltest
// has a two-port ConnectX-7 tree and a matching fake kernel (devlink info
// and health reporters, rtnetlink, module EEPROM, driver statistics) for
// tests of this package and its users.
//
// Snapshot reads everything at once for the exporter and status: a part
// that fails (no devlink, no CAP_NET_ADMIN) is recorded in Snapshot.Errors
// and the others are still returned; only a dead context or a device that
// has gone (*GoneError) fail the whole snapshot.
package kernel
