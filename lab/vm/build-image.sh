#!/bin/bash
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
#
# Build a BIOS-bootable Debian bookworm qcow2 for the VM lab (docs/lab.md "VM backend").
# Usage: build-image.sh OUT_DIR PUBKEY MIRROR PACKAGES
#   OUT_DIR   empty work directory; base.qcow2 is left there (the caller moves it into the cache)
#   PUBKEY    ssh public key for root's authorized_keys
#   MIRROR    Debian mirror URI (the host's apt source)
#   PACKAGES  comma-separated package list for mmdebstrap --include
# Called by `lab/vm/vmlab build`, which keys the cache by a hash of this file and its arguments.
# Needs root, loop devices, mmdebstrap, sfdisk, partx, mkfs.ext4, qemu-img (vmlab installs them).
set -euo pipefail
W=${1:?out dir}; PUB=${2:?pubkey}; MIRROR=${3:?mirror}; PKGS=${4:?packages}
cd "$W"
t0=$(date +%s)
step() { echo "build-image: $* ($(( $(date +%s) - t0 )) s)" >&2; }

mmdebstrap --quiet --variant=apt --components=main --include="$PKGS" bookworm rootfs "deb $MIRROR bookworm main"
step "mmdebstrap done"

echo gpu-tray-vm > rootfs/etc/hostname
printf '127.0.0.1 localhost\n127.0.1.1 gpu-tray-vm\n' > rootfs/etc/hosts
echo 'LABEL=root / ext4 errors=remount-ro 0 1' > rootfs/etc/fstab
install -d -m 700 rootfs/root/.ssh
install -m 600 "$PUB" rootfs/root/.ssh/authorized_keys
# no reverse DNS over the restricted slirp network: sshd must not wait for it
printf 'UseDNS no\nPermitRootLogin prohibit-password\n' > rootfs/etc/ssh/sshd_config.d/gpu-tray-vm.conf
mkdir -p rootfs/etc/systemd/network
printf '[Match]\nName=en* eth*\n[Network]\nDHCP=yes\n' > rootfs/etc/systemd/network/20-wired.network
chroot rootfs systemctl enable systemd-networkd.service >/dev/null 2>&1
# nothing in the VM waits for a network it cannot reach (restrict=on)
chroot rootfs systemctl mask systemd-networkd-wait-online.service apt-daily.timer apt-daily-upgrade.timer \
  man-db.timer e2scrub_all.timer fstrim.timer >/dev/null 2>&1 || true
sed -i -e 's/^GRUB_TIMEOUT=.*/GRUB_TIMEOUT=0/' \
       -e 's/^GRUB_CMDLINE_LINUX_DEFAULT=.*/GRUB_CMDLINE_LINUX_DEFAULT=""/' \
       -e 's/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX="console=ttyS0,115200 net.ifnames=0"/' rootfs/etc/default/grub
cat >> rootfs/etc/default/grub <<'GRUB'
GRUB_TERMINAL=serial
GRUB_SERIAL_COMMAND="serial --unit=0 --speed=115200"
GRUB_DISABLE_OS_PROBER=true
GRUB_DISABLE_RECOVERY=true
GRUB
: > rootfs/etc/machine-id
# small initramfs: GRUB reads it through BIOS calls, which is slow under TCG (36 MB -> ~6 MB)
echo MODULES=list > rootfs/etc/initramfs-tools/conf.d/10-gpu-tray-vm.conf
printf 'virtio_pci\nvirtio_blk\nvirtio_scsi\nsd_mod\next4\n' >> rootfs/etc/initramfs-tools/modules
chroot rootfs update-initramfs -u -k all >/dev/null 2>&1
rm -rf rootfs/var/cache/apt/archives/*.deb rootfs/var/lib/apt/lists/*_Packages
step "configured"

truncate -s 4G disk.raw
sfdisk -q disk.raw <<<'2048,,L,*'
LOOP=$(losetup -f --show -P disk.raw)
cleanup() { umount -R mnt 2>/dev/null || true; losetup -d "$LOOP" 2>/dev/null || true; }
trap cleanup EXIT
# losetup -P alone does not create loopNp1 on hosts without udev
[ -b "${LOOP}p1" ] || partx -a "$LOOP"
mkfs.ext4 -q -L root "${LOOP}p1"
mkdir -p mnt && mount "${LOOP}p1" mnt
cp -a rootfs/. mnt/
# private /dev for the chroot: without udev there is no /dev/disk/by-uuid and grub-mkconfig would write
# root=/dev/loopNp1; a by-uuid link makes it write root=UUID=...
mount -t tmpfs gpu-tray-vm-dev mnt/dev
cp -a /dev/null /dev/zero /dev/random /dev/urandom /dev/tty "$LOOP" "${LOOP}p1" mnt/dev/
UUID=$(blkid -s UUID -o value "${LOOP}p1")
mkdir -p mnt/dev/disk/by-uuid && ln -s "../../$(basename "${LOOP}p1")" "mnt/dev/disk/by-uuid/$UUID"
for d in proc sys; do mount --bind /$d mnt/$d; done
chroot mnt grub-install --target=i386-pc --modules="part_msdos ext2" "$LOOP" >/dev/null 2>&1
chroot mnt update-grub >/dev/null 2>&1
grep -q "root=UUID=$UUID" mnt/boot/grub/grub.cfg || { echo "build-image: grub.cfg has no root=UUID=$UUID" >&2; exit 1; }
echo "grub-pc grub-pc/install_devices multiselect /dev/vda" | chroot mnt debconf-set-selections
umount -R mnt; losetup -d "$LOOP"; trap - EXIT
step "disk + GRUB done"
qemu-img convert -O qcow2 disk.raw base.qcow2
rm -rf disk.raw rootfs mnt
step "base.qcow2 written"
