package kernel

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/cxray/cxray/internal/linuxabi"
)

// Driver statistics are what `ethtool -S IFACE` prints: the names of the
// driver's ETH_SS_STATS string set (ETHTOOL_GSTRINGS) and their values
// (ETHTOOL_GSTATS), through the SIOCETHTOOL ioctl, since ethtool netlink
// has no message for a driver's own statistics. mlx5's names are those of
// drivers/net/ethernet/mellanox/mlx5/core/en_stats.c (rx_discards_phy,
// rx_out_of_buffer, rx_prio3_pause, rx_pci_signal_integrity, ...).
//
// Each request is a struct of uapi linux/ethtool.h that the kernel fills
// in: ethtool_sset_info (cmd, reserved, sset_mask, then one u32 count per
// set bit), ethtool_gstrings (cmd, string_set, len, then len names of
// ETH_GSTRING_LEN bytes) and ethtool_stats (cmd, n_stats, then n_stats
// u64), all in the machine's byte order.
const (
	ethSSStats    = 1  // ETH_SS_STATS
	ethGstringLen = 32 // ETH_GSTRING_LEN
	// maxStats bounds the statistics taken from one interface (mlx5 has
	// a few hundred, per queue most of them).
	maxStats = 1 << 16
	// statsSlack is room for statistics a driver adds between two
	// requests: the kernel writes as many as it has then, whatever the
	// buffer (ethtool_get_strings, ethtool_get_stats in net/ethtool/ioctl.c).
	statsSlack = 256
)

// EthtoolIoctl performs one SIOCETHTOOL request on an interface: buf is
// the command's struct, which the kernel reads and fills in.
type EthtoolIoctl func(ifname string, buf []byte) error

// DriverStats reads an interface's driver statistics by name (ethtool -S).
// The names and the values are read by two requests; a count that changed
// between them (a driver reconfigured) is read again, up to three times.
func (d *Device) DriverStats(ctx context.Context, ifname string) (map[string]uint64, error) {
	return DriverStats(ctx, d.opts.Ethtool, ifname)
}

// DriverStats is Device.DriverStats for any interface; io nil is the
// machine's ioctl.
func DriverStats(ctx context.Context, io EthtoolIoctl, ifname string) (map[string]uint64, error) {
	if io == nil {
		io = ethtoolIoctl
	}
	if ifname == "" || len(ifname) >= linuxabi.IFNAMSIZ || strings.ContainsAny(ifname, "/\x00") {
		return nil, fmt.Errorf("kernel: %q is not an interface name", ifname)
	}
	what := "driver statistics of " + ifname
	for try := 0; try < 3; try++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("kernel: reading the %s: %w", what, err)
		}
		n, err := statsCount(io, ifname)
		if err != nil {
			return nil, ioctlErr(what, err)
		}
		names, err := statsNames(io, ifname, n)
		if err != nil {
			return nil, ioctlErr(what, err)
		}
		values, err := statsValues(io, ifname, n)
		if errors.Is(err, errCountChanged) || len(names) != n {
			continue
		}
		if err != nil {
			return nil, ioctlErr(what, err)
		}
		out := make(map[string]uint64, n)
		for i, name := range names {
			// Names are unique per driver; a repeated one keeps its first
			// value, as a reader of ethtool -S sees it first.
			if _, dup := out[name]; !dup {
				out[name] = values[i]
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("kernel: reading the %s: the number of statistics kept changing (the driver is being reconfigured); try again", what)
}

var errCountChanged = errors.New("the number of statistics changed between requests")

func statsCount(io EthtoolIoctl, ifname string) (int, error) {
	buf := make([]byte, 16+4)
	binary.NativeEndian.PutUint32(buf[0:], linuxabi.ETHTOOL_GSSET_INFO)
	binary.NativeEndian.PutUint64(buf[8:], 1<<ethSSStats)
	if err := io(ifname, buf); err != nil {
		return 0, err
	}
	if binary.NativeEndian.Uint64(buf[8:])&(1<<ethSSStats) == 0 {
		return 0, &UnsupportedError{What: "driver statistics", Msg: "the driver of " + ifname + " has no statistics (ETH_SS_STATS)"}
	}
	n := int(binary.NativeEndian.Uint32(buf[16:]))
	if n > maxStats {
		return 0, fmt.Errorf("the driver reports %d statistics, more than %d", n, maxStats)
	}
	return n, nil
}

func statsNames(io EthtoolIoctl, ifname string, n int) ([]string, error) {
	buf := make([]byte, 12+(n+statsSlack)*ethGstringLen)
	binary.NativeEndian.PutUint32(buf[0:], linuxabi.ETHTOOL_GSTRINGS)
	binary.NativeEndian.PutUint32(buf[4:], ethSSStats)
	binary.NativeEndian.PutUint32(buf[8:], uint32(n))
	if err := io(ifname, buf); err != nil {
		return nil, err
	}
	got := int(binary.NativeEndian.Uint32(buf[8:]))
	if got > n+statsSlack {
		return nil, fmt.Errorf("the kernel returned %d names into room for %d", got, n+statsSlack)
	}
	names := make([]string, got)
	for i := range names {
		b := buf[12+i*ethGstringLen : 12+(i+1)*ethGstringLen]
		if j := strings.IndexByte(string(b), 0); j >= 0 {
			b = b[:j]
		}
		names[i] = string(b)
	}
	return names, nil
}

func statsValues(io EthtoolIoctl, ifname string, n int) ([]uint64, error) {
	buf := make([]byte, 8+(n+statsSlack)*8)
	binary.NativeEndian.PutUint32(buf[0:], linuxabi.ETHTOOL_GSTATS)
	binary.NativeEndian.PutUint32(buf[4:], uint32(n))
	if err := io(ifname, buf); err != nil {
		return nil, err
	}
	got := int(binary.NativeEndian.Uint32(buf[4:]))
	if got != n {
		return nil, errCountChanged
	}
	vals := make([]uint64, n)
	for i := range vals {
		vals[i] = binary.NativeEndian.Uint64(buf[8+i*8:])
	}
	return vals, nil
}

// ioctlErr says what a failed SIOCETHTOOL means.
func ioctlErr(what string, err error) error {
	var ue *UnsupportedError
	switch {
	case errors.As(err, &ue):
		return err
	case errors.Is(err, linuxabi.ENODEV):
		return &NotFoundError{fmt.Sprintf("kernel: reading the %s: no such interface now (removed, renamed, or in another network namespace)", what)}
	case errors.Is(err, linuxabi.EOPNOTSUPP):
		return &UnsupportedError{What: what, Msg: "the driver does not give the " + what}
	case errors.Is(err, linuxabi.EPERM), errors.Is(err, linuxabi.EACCES):
		return &PermissionError{What: what, Cap: "CAP_NET_ADMIN", Err: err}
	}
	return fmt.Errorf("kernel: reading the %s: %v", what, errnoOf(err))
}
