/**
 * Internal, not API: what every file of a store goes through. The checksummed envelope with atomic
 * replace, I/O errors that name their file, the read-only latch, crash points for tests, copies
 * that never follow a link, the forensic byte scan and UTF-8 into buffers the caller wipes. The
 * bottom layer: JDK only apart from the core's exceptions; never the engines.
 */
package dev.nepenthe.core.internal.io;
