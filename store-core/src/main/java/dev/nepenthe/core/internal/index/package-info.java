/**
 * Internal, not API, but shared with this repository's index modules: the exact index (the oracle
 * every approximate index is tested against), the top-k heap, the swap-remove vector block and the
 * base class of the indexes that keep one under a lock, the argument checks every index shares and
 * the service-loader lookup of factories. May use the index SPI, the vector kernels and
 * internal.io; never the engines.
 */
package dev.nepenthe.core.internal.index;
