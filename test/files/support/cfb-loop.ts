/**
 * A 1.5 KiB compound file whose directory chain points to itself: the header, one FAT sector
 * (FAT[0] = the FAT sector itself, FAT[1] = 1, a loop) and one directory sector holding a root
 * entry. An unbounded reader follows the directory chain forever.
 */
export function directoryChainLoopMsg(): Buffer {
  const file = Buffer.alloc(512 * 3, 0);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(file, 0);
  file.writeUInt16LE(0x003e, 24); // minor version
  file.writeUInt16LE(3, 26); // major version 3: 512-byte sectors
  file.writeUInt16LE(0xfffe, 28); // byte order
  file.writeUInt16LE(9, 30); // sector shift
  file.writeUInt16LE(6, 32); // mini sector shift
  file.writeUInt32LE(1, 44); // one FAT sector
  file.writeUInt32LE(1, 48); // directory starts at sector 1
  file.writeUInt32LE(4096, 56); // mini stream cutoff
  file.writeUInt32LE(0xfffffffe, 60); // no mini FAT
  file.writeUInt32LE(0xfffffffe, 68); // no DIFAT sectors
  file.fill(0xff, 76, 512);
  file.writeUInt32LE(0, 76); // the FAT is sector 0
  const fat = 512;
  file.fill(0xff, fat, fat + 512);
  file.writeUInt32LE(0xfffffffd, fat); // sector 0 is a FAT sector
  file.writeUInt32LE(1, fat + 4); // sector 1 → sector 1: the loop
  const dir = 1024;
  const name = Buffer.from('Root Entry\0', 'utf16le');
  name.copy(file, dir);
  file.writeUInt16LE(name.length, dir + 0x40);
  file[dir + 0x42] = 5; // root storage
  file.writeUInt32LE(0xffffffff, dir + 0x44);
  file.writeUInt32LE(0xffffffff, dir + 0x48);
  file.writeUInt32LE(0xffffffff, dir + 0x4c);
  file.writeUInt32LE(0xfffffffe, dir + 0x74);
  for (let o = dir + 128; o < dir + 512; o += 128) {
    file.writeUInt32LE(0xffffffff, o + 0x44);
    file.writeUInt32LE(0xffffffff, o + 0x48);
    file.writeUInt32LE(0xffffffff, o + 0x4c);
  }
  return file;
}
