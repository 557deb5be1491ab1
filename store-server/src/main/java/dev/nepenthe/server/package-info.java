/**
 * The {@code nepenthe} command's entry point (picocli) and the demo on the embedded default. May
 * use the cli package, store-core's API, and for the demo's proofs internal.evidence (the signing
 * key) and internal.io (the forensic scan).
 */
package dev.nepenthe.server;
