/**
 * A file system that injects disk faults (failed writes, reads, fsyncs, renames and deletes, a full
 * disk) by a seeded plan that counts and lists every one, for the store's fault tests. JDK only;
 * the store never sees its types.
 */
package dev.nepenthe.testing.faults;
