// Package conformance checks cxray against NVIDIA's unmodified mstflint
// tools (mstflint, mstreg, mstlink, mstconfig) on the same emulated adapter.
//
// The tests build the cxray binary once, run one `cxray emu run` (or `cxray
// emu serve`, to switch faults mid-run) per scenario of testdata/, and
// inside that one private namespace let both tools read the same emulated
// device; a shell script keeps each command's output, status and time, and
// the tests compare the readings field by field in Go:
//
//   - TestFlintQueryVsStatus: `mstflint q` and `cxray status` (FW version,
//     PSID, base MAC, release date; Base GUID/MAC once the emulator fills
//     the NV TLVs mstflint reads them from);
//   - TestMstregVsRegGet: every leaf `mstreg --get` prints of MGIR, PMAOS,
//     PAOS, PTYS and PDDR (pages 0, 1, 3) against `cxray reg get -o json
//     --raw`, paired by position and name (CompareRegister);
//   - TestMstlinkVsRegisters, TestMstlinkModuleVsPDDR,
//     TestMstlinkModuleVsCxrayModule: what `mstlink` and `mstlink -m` print
//     against the registers cxray reads and `cxray module`;
//   - TestLinkInfiniBandVsMstlink: `mstlink` and `mstlink -c` against
//     `cxray link` on emulated InfiniBand ports (testdata/ib.yaml), with
//     TestLinkInfiniBandFaultsVsMstlink (a partner gone and back: link
//     down, then the IB link down counter), and
//     TestInfiniBandRealTime: examples/gpu-node.yaml on the wall clock, its
//     IB sysfs, status and link through registers and the kernel backend;
//   - TestMstconfigVsConfigQuery: `mstconfig q` against `cxray config query`;
//   - TestPCIeVsMstlink: `mstlink --port_type PCIE -c` against `cxray link
//     --pcie` (MPEIN speed and width, MPCNT errors after AER errors
//     injected through the control socket; the one valid PCIe link);
//   - TestConcurrentPeersAndCxray: four mstreg and two cxray loops at once;
//   - TestFaultsThroughBothTools: held semaphores, register status 4 and 7,
//     surprise removal;
//   - TestAdviceClearsHeldSemaphore: the command cxray advises for a held
//     gateway semaphore clears it, and mstflint's clear_semaphore cannot;
//   - TestKilledCommandsLeaveTheDeviceUsable: cxray commands killed with
//     SIGINT, SIGTERM, SIGHUP and SIGKILL at random points; the next cxray
//     and mstreg must use the device (CXRAY_KILL_ROUNDS, CXRAY_KILL_REPORT).
//
// They need root and /dev/fuse (mount namespaces, FUSE) and the mstflint
// package; without them they skip, loudly. -short shortens the concurrency
// storm and skips the slow held-ICMD-semaphore case. CXRAY_CONCURRENCY_ITERS=N
// sets the storm's runs (N per mstreg, 2N per cxray loop), and
// CXRAY_CONCURRENCY_INJECT_WEDGE=1 plays a dead semaphore holder in its
// first attempt, which must wedge the storm and be cleared by the advice
// cxray prints (=icmd: a dead holder of the ICMD semaphore, which the
// first cxray read after the storm must release itself).
//
// The package itself holds the parsers of the peer tools' outputs and the
// register comparison, unit-tested on captured outputs without a device.
package conformance
