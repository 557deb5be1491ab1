/**
 * The data sets the harnesses read: ann-benchmarks HDF5 files, TEXMEX .fvecs/.ivecs/.bvecs files,
 * and dict-gcide's definitions embedded once with all-MiniLM-L6-v2. May use store-embed and jhdf.
 */
package dev.nepenthe.bench.data;
