package dev.nepenthe.cluster.internal;

import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.server.grpc.NepentheServer;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;

/**
 * The part of a replica that stands on its store's files: the store, its gRPC API and the attestor
 * that speaks for it. Opened at start, and closed and opened again around the install of a copy,
 * which replaces those files; the Raft server, the journal and the cluster state stay.
 */
final class LocalEngine implements Closeable {

    /** How the engine is opened, the same each time. */
    record Recipe(
            Path storeFolder,
            StoreOptions options,
            List<ErasureSurface> surfaces,
            Supplier<NepentheServer.Options> api,
            AttestorFactory attestor) {}

    /** Makes the attestor for a freshly opened store. */
    interface AttestorFactory {
        Attestor of(Nepenthe store);
    }

    private final Nepenthe store;
    private final NepentheServer api;
    private final Attestor attestor;

    private LocalEngine(Nepenthe store, NepentheServer api, Attestor attestor) {
        this.store = store;
        this.api = api;
        this.attestor = attestor;
    }

    /** Opens the store, starts its API and its attestor. */
    static LocalEngine open(Recipe r) throws IOException {
        Nepenthe store = Nepenthe.open(r.storeFolder(), r.options(), r.surfaces());
        NepentheServer api;
        try {
            api = NepentheServer.start(store, r.api().get());
        } catch (IOException | RuntimeException e) {
            store.close();
            throw e;
        }
        Attestor attestor = r.attestor().of(store);
        attestor.start();
        return new LocalEngine(store, api, attestor);
    }

    Nepenthe store() {
        return store;
    }

    NepentheServer api() {
        return api;
    }

    /** Stops the attestor, then the API, which closes the store. */
    @Override
    public void close() throws IOException {
        attestor.close();
        api.close();
    }
}
