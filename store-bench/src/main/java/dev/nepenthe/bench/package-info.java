/**
 * What the benchmark harnesses share: the machine line printed above their tables, running a Python
 * peer's side of a comparison, and the plots' common look. May use store-core's kernel choice and
 * JFreeChart.
 */
package dev.nepenthe.bench;
