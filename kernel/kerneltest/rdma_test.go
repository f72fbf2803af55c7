package kerneltest

import (
	"os"
	"testing"

	"github.com/cxray/cxray/prm/ifc"
)

// The fake's RDMA netlink numbers are the installed uAPI header's.
func TestRDMANumbers(t *testing.T) {
	const hdr = "/usr/include/rdma/rdma_netlink.h"
	src, err := os.ReadFile(hdr)
	if err != nil {
		t.Skipf("SKIPPED: no %s to check the RDMA netlink numbers against (apt-get install linux-libc-dev)", hdr)
	}
	es, err := ifc.ScanEnums(hdr, src)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]int64{
		"RDMA_NL_NLDEV": RDMA_NL_NLDEV, "RDMA_NLDEV_CMD_GET": RDMA_NLDEV_CMD_GET,
		"RDMA_NLDEV_CMD_RES_QP_GET_RAW": RDMA_NLDEV_CMD_RES_QP_GET_RAW, "RDMA_NLDEV_CMD_RES_MR_GET_RAW": RDMA_NLDEV_CMD_RES_MR_GET_RAW,
		"RDMA_NLDEV_ATTR_DEV_INDEX": RDMA_NLDEV_ATTR_DEV_INDEX, "RDMA_NLDEV_ATTR_DEV_NAME": RDMA_NLDEV_ATTR_DEV_NAME,
		"RDMA_NLDEV_ATTR_RES_QP": RDMA_NLDEV_ATTR_RES_QP, "RDMA_NLDEV_ATTR_RES_QP_ENTRY": RDMA_NLDEV_ATTR_RES_QP_ENTRY,
		"RDMA_NLDEV_ATTR_RES_LQPN": RDMA_NLDEV_ATTR_RES_LQPN, "RDMA_NLDEV_ATTR_RES_MR": RDMA_NLDEV_ATTR_RES_MR,
		"RDMA_NLDEV_ATTR_RES_MR_ENTRY": RDMA_NLDEV_ATTR_RES_MR_ENTRY, "RDMA_NLDEV_ATTR_RES_LKEY": RDMA_NLDEV_ATTR_RES_LKEY,
		"RDMA_NLDEV_ATTR_RES_MRN": RDMA_NLDEV_ATTR_RES_MRN, "RDMA_NLDEV_ATTR_RES_RAW": RDMA_NLDEV_ATTR_RES_RAW,
	} {
		if got, ok := ifc.Lookup(es, name); !ok || got != v {
			t.Errorf("%s = %d (found %v), the fake uses %d", name, got, ok, v)
		}
	}
}
