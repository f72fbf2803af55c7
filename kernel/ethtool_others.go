//go:build !linux

package kernel

import "github.com/cxray/cxray/internal/platform"

// ethtoolIoctl: SIOCETHTOOL is Linux's.
func ethtoolIoctl(string, []byte) error {
	return &platform.NeedsLinuxError{What: "driver statistics (ethtool -S)", Why: "they come from the Linux driver through SIOCETHTOOL"}
}
