/**
 * The forget protocol's public types: requests and scopes, operations and their states, legal
 * holds, re-admissions, verification's probe policy and suspects, and the {@link
 * dev.nepenthe.core.forget.ErasureSurface} SPI through which a component outside the store (a
 * cache) takes part in every forget. API; may use dev.nepenthe.core and dev.nepenthe.core.audit,
 * nothing internal.
 */
package dev.nepenthe.core.forget;
