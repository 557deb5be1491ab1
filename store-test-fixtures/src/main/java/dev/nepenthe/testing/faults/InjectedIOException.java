package dev.nepenthe.testing.faults;

import java.io.IOException;

/**
 * An I/O error a {@link FaultPlan} made up. The store never sees the type (store-core does not
 * depend on the test fixtures); tests use it to tell an injected fault from a real one in a cause
 * chain.
 */
public final class InjectedIOException extends IOException {

    private static final long serialVersionUID = 1L;

    InjectedIOException(String message) {
        super(message);
    }
}
