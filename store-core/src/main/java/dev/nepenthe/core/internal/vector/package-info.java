/**
 * Internal, not API: the two implementations of {@code VectorKernels}, on the incubating Vector API
 * and in plain Java in the same summation order, so that they agree bit for bit. Loaded only
 * through {@code dev.nepenthe.core.vector.Kernels}; the one package of store-core that imports
 * jdk.incubator.vector. PanamaPairs, PanamaQuads and PanamaInt8 are generated at build time by
 * store-core/src/codegen (docs/BUILD.md, "Generated code").
 */
package dev.nepenthe.core.internal.vector;
