/**
 * The arithmetic every index runs in its hot loops: {@link dev.nepenthe.core.vector.VectorKernels},
 * chosen once per process by {@link dev.nepenthe.core.vector.Kernels}, and the centroid layout the
 * nearest-centroid kernel scans. API for the index modules; the implementations live in
 * internal.vector and are loaded only through {@code Kernels}, so no caller imports the incubating
 * Vector API.
 */
package dev.nepenthe.core.vector;
