/**
 * Internal, not API: large zeroed native regions for vectors and codes (on huge pages where the
 * system offers them), freed by the collector. JDK only (the foreign function and memory API).
 */
package dev.nepenthe.core.internal.memory;
