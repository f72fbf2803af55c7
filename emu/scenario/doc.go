// Package scenario describes emulated adapters: named profiles (a ConnectX-7
// with two 400G ports, a single-port ConnectX-7 in InfiniBand mode, a
// ConnectX-6 Dx with two 100G ports), YAML scenario
// files that pick profiles and override their facts and faults, and the
// constructors that turn them into ready *emu.Device values with their
// *fw.Firmware. It also resolves the device names "emu", "emu:PROFILE" and
// "emu:FILE.yaml".
//
// # Scenario files
//
// A scenario is one YAML document. Every key is optional except devices;
// unknown keys, values of the wrong kind and facts a device cannot have are
// errors that name the file, line and column and say what would be valid.
// Anchors, aliases and merge keys are refused (write values out). The
// keys and their nesting are the types of schema.go; values are checked
// by the readers in read.go, ib.go, link.go, nvmf.go and pcie.go.
//
//	seed: 7                      # default 1; device seeds derive from it
//	clock:
//	  start: 2024-05-01T08:00:00Z  # emulated time at power-on
//	  mode: manual               # real (default): runs with the wall clock from start
//	                             # manual: moves only when advanced
//	prm: builtin                 # the register database the firmware answers
//	                             # from: builtin (default) or an ADB file,
//	                             # relative to this file; a newer one (Rev
//	                             # 0.61+) adds registers (MROQ)
//	devices:                     # 1..16 adapters
//	  - name: nic0               # default nic<index>
//	    profile: cx7-2p400g      # default cx7-2p400g; see Profiles()
//	    seed: 99                 # default scenario seed × 1000 + index
//	    bdf: 0000:03:00.0        # first function; default 0000:<03+index>:00.0
//	    functions: 2             # a count, or a list of
//	                             #   {bdf, port, netdev, rdma, mac}; default 1;
//	                             #   mac: the OS address (MAC drift)
//	    firmware:
//	      version: 28.39.1010
//	      pending_version: 28.40.1000  # image in flash waiting for a reset
//	      build_time: 2023-10-05T12:34:56Z
//	      build_id: 0x5f3a0c21
//	      psid: MT_0000000834    # at most 16 characters
//	      secure: true
//	    serial_number: MT2341X01234   # default drawn from the seed
//	    part_number: EMU-CX7-2P400G   # MQIS model name
//	    description: "Emulated adapter"  # MQIS model description
//	    image_vsd: "lab image"
//	    device_vsd: "rack 4"
//	    base_mac: b8:3f:d2:a1:b2:c0   # default: NVIDIA OUI + bits from the seed
//	    base_guid: b83f:d203:00a1:b2c0 # default: derived from the MAC
//	    ports:                   # overrides, by local port number
//	      - port: 2
//	        admin: down          # up (default) or down at power-on
//	        lanes: 4
//	        protocols: [400GAUI-4, CAUI-4]   # names from fw.EthProtocols
//	        traffic:             # merged over the profile's
//	          tx_frames_per_sec: 5e6
//	          rx_frames_per_sec: 4e6
//	          frame_bytes: 1500
//	          multicast_share: 0.01
//	          broadcast_share: 0.001
//	          rx_errors_per_sec: 0
//	          rx_discards_per_sec: 0
//	          symbol_errors_per_sec: 0
//	          fec_corrected_per_sec: 40
//	          fec_uncorrectable_per_sec: 0
//	          priority_share: [0.7, 0, 0, 0.3]
//	        link:                # link quality and partner (fw.LinkSpec)
//	          raw_ber: 1e-8      # pre-FEC bit error ratio of every lane
//	          lane_ber: [0, 0, 3e-5, 0]  # per lane, 0 takes raw_ber: a degraded lane
//	          effective_ber: 0   # bits in blocks FEC could not correct
//	          partner_protocols: [CAUI-4]  # what the partner enables: a speed mismatch
//	          partner_fec: none  # a FEC the partner forces: none, firecode, rs528, rs544
//	    modules:                 # overrides, by cage number (0-based)
//	      - module: 0
//	        plugged: false       # empty cage at power-on
//	      - module: 1
//	        type: qsfp28-100g-dac  # a module of the emu/optics catalog: qsfp28-100g-sr4,
//	                             #   qsfp28-100g-dac, sfp28-25g-lr, qsfp112-400g-dr4,
//	                             #   qsfp112-400g-sr4, osfp-400g-dr4, osfp-400g-sr4 or
//	                             #   empty; sets media and protocols unless given
//	        media: copper        # optical or copper
//	        faults: [frozen_monitors]  # module faults: i2c_hang, no_ddm, frozen_monitors,
//	                             #   stale_firmware_view, unsupported_identifier,
//	                             #   checksum_error, firmware_unaware, low_rx_power
//	        error: High_Temperature   # a PMAOS error_type name (plugged, unusable)
//	        protocols: [CAUI-4]
//	        temperature: {idle: 33, load: 6, wander: 1.5, warmup: 5m, period: 2m, high: 75, low: 70}
//	    asic_temperature: {idle: 48, load: 12, wander: 3, high: 105, low: 100}
//	    roce:                    # ROCE_ACCL feature names (fields without _field_select)
//	      supported: [roce_adp_retrans, roce_tx_window]
//	      enabled: [roce_adp_retrans]
//	    rdma: {loss: 1e-5, rtt: 8us}   # RoCE path the emulated RDMA counters follow:
//	                             #   loss, rtt, log_window (0: NV), share, priority
//	    nvmf:                    # NVMe-oF target offload, objects on the first function (emu/cmdif)
//	      offload: true          # the capability; default: on for cx7-2p400g, off for cx6dx-2p100g
//	      xrqs:                  # replace the profile's XRQs (cx7-2p400g: XRQ 1, namespaces 1 and 2)
//	        - xrqn: 1
//	          namespaces:        # counters grow with the clock at these rates (per second)
//	            - {nsid: 1, read_iops: 120000, read_blocks: 8, write_iops: 40000, write_blocks: 8,
//	               inline_share: 0.3, flush_per_sec: 20, error_per_sec: 0, backend_error_per_sec: 0}
//	    numa_node: 1             # the NUMA node of the adapter's slot (sysfs numa_node)
//	    lockdown: false          # true: the host kernel is in lockdown; config-space writes fail
//	                             #   with EPERM (reads work), the command interface still answers
//	    pcie:                    # the card's link to the host (emu/hostlink); speeds gen1..gen6
//	      max_speed: gen5        #   or GT/s; what the card can train (default: the profile's,
//	      max_width: 16          #   cx7 Gen5 x16, cx6dx Gen4 x16)
//	      slot_speed: gen5       # what the slot's port can train (default: as the card)
//	      slot_width: 16
//	      speed: gen5            # what the link trained (default: the lower of card and slot;
//	      width: 16              #   width: 8 here would be a card trained x8 in an x16 slot)
//	      target_speed: gen5     # the card's Link Control 2 target (default: its max)
//	      correctable_per_sec: {BadTLP: 0}   # steady AER correctable errors, by kernel name
//	    nv:                      # NV configuration (mlxconfig names) over the profile's
//	      configured: {SRIOV_EN: True, NUM_OF_VFS: 8}   # Next Boot and Current
//	      pending: {LOG_TX_PSN_WINDOW: 10}              # Next Boot only (set, not applied)
//	      factory: {"nv_global_pci_cap.max_vfs_per_pf": 64}
//	      unsupported: [nv_pf_pci_conf]                 # TLVs MNVQC says are not there
//	      reject_writes: []      # NV faults: TLVs whose writes answer 0x20 ("*": all)
//	      no_access: false       # every NV register answers status 4
//	      erase_exceeded: false  # every NV write answers 0x21
//	      erase_budget: 0        # writes left before 0x21 (0: no limit)
//	    faults:
//	      # device level, on every function (emu.Faults)
//	      gateway_semaphore_held: false
//	      icmd_semaphore_held: false
//	      icmd_stuck_busy: false
//	      slow_icmd_polls: 0
//	      slow_icmd: 0s
//	      removed: false
//	      register_status: {MCIA: resource_not_available}
//	      # firmware level (fw.Faults)
//	      unsupported: [MCDD]    # status 4, and left out of MCAM
//	      status: [{register: PTYS, method: set, status: bad_param}]
//	      busy: 3                # the next 3 requests answer busy
//	      freeze_temperatures: true
//	      asic_temperature_offset: 30
//	      link_down: [2]         # local ports without a link partner
//
// Statuses are numbers or names: busy, bad_param, reg_not_supported,
// method_not_supported, resource_not_available, internal_error.
//
// # Command interface and lockdown
//
// Every function also answers firmware commands (emu/cmdif): capability
// pages consistent with the profile (every PF manages its own e-switch),
// e-switch functions and vport states, RDMA Q counters,
// NVMe-oF namespace counters (the nvmf key), a few QPs and MKEYs, and
// ACCESS_REG into the same firmware the gateway reaches. With lockdown:
// true, Function.Config (the config space to hand clients) refuses writes
// with EPERM as a locked-down kernel does; clients then take the command
// interface.
//
// # InfiniBand ports
//
// A port runs InfiniBand when the adapter's NV configuration says so at
// power-on (LINK_TYPE_P<n>=IB: the cx7-1p-ndr profile's default, or nv:
// configured in the file); its ports: entry then takes an ib: key with
// the fabric's side (speeds, partner_speeds, width, state, lid, sm_lid,
// link_recoveries_per_hour; ib.go). Its interface is IPoIB (ibp<bus>s<slot>
// by default).
//
// # Modules
//
// Every cage holds a module of the emu/optics catalog: cx7-2p400g starts
// with a QSFP112 400GBASE-DR4 in cage 0 and an SR4 in cage 1, cx6dx-2p100g
// with QSFP28 passive copper cables. A module answers MCIA (its EEPROM
// pages) and PDDR page 3 (the firmware's decoded view) from one model whose
// diagnostics drift with the clock; its faults are listed under the cage
// (faults:) and can be switched at run time through Adapter.Optics.
//
// # PCI functions and ports
//
// A dual-port ConnectX shows one PCI function per port, and port registers
// (PAOS, PTYS, PDDR, PMLP, PPCNT) name ports relative to the function the
// request comes through: local port 1 is the function's own port, as the
// Linux driver and mlxlink expect. A function that is the adapter's only
// one also reaches its other ports as local ports 2, 3, ... Module and
// sensor numbers are adapter-wide.
package scenario
