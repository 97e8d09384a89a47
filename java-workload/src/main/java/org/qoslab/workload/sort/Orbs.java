package org.qoslab.workload.sort;

import java.util.Properties;
import org.omg.CORBA.ORB;
import org.omg.PortableServer.POA;
import org.omg.PortableServer.POAHelper;
import org.qoslab.workload.sort.corba.Sorter;
import org.qoslab.workload.sort.corba.SorterHelper;
import org.qoslab.workload.sort.corba.SorterPOA;

/**
 * The GlassFish ORB (org.glassfish.corba 5.0.0, Maven Central) as the sort workload uses it: a
 * server ORB listening on one fixed IIOP port, its servant published under the name
 * {@value #NAME} for {@code corbaloc} look-ups (the ORB's Interoperable Naming Service
 * answers for it: no separate name server runs), and client ORBs; both with
 * {@link MarkingOrbSocketFactory}.
 */
public final class Orbs {
    /** The object key clients resolve: {@code corbaloc:iiop:1.2@HOST:PORT/SortService}. */
    public static final String NAME = "SortService";

    private Orbs() { }

    private static Properties base(double timeoutS) {
        Properties p = new Properties();
        p.setProperty("org.omg.CORBA.ORBClass", "com.sun.corba.ee.impl.orb.ORBImpl");
        p.setProperty("org.omg.CORBA.ORBSingletonClass", "com.sun.corba.ee.impl.orb.ORBSingleton");
        p.setProperty("com.sun.corba.ee.transport.ORBSocketFactoryClass", MarkingOrbSocketFactory.class.getName());
        String ms = Long.toString((long) (timeoutS * 1000));
        // a reply that does not come within the timeout fails the call (ms)
        p.setProperty("com.sun.corba.ee.transport.ORBWaitForResponseTimeout", ms);
        // the ORB's own read limits must not end a slow message first. By default it gives up a
        // blocking read after 6 s without the rest of a message (TCP timeouts "initial:max:backoff",
        // ms: 2000:6000:20) and a fragment after 18 s. Measured (mechanisms-sort, campaign flood,
        // FIFO): "00410029: Blocking read failed ... max wait time = 6,000ms", COMM_FAILURE, and the
        // collect call ended in RequestCanceledException after 23.6 s, long before the 60 s timeout
        p.setProperty("com.sun.corba.ee.transport.ORBTCPTimeouts", "2000:" + ms + ":20");
        p.setProperty("com.sun.corba.ee.ORBFragmentReadTimeout", ms);
        return p;
    }

    /** A client ORB (outgoing connections only). */
    public static ORB client(double timeoutS) {
        return ORB.init(new String[0], base(timeoutS));
    }

    /**
     * A server ORB on {@code host}:{@code port} serving {@code store} as {@value #NAME}; its
     * request threads run until {@link ORB#shutdown}.
     */
    public static ORB serve(String host, int port, SortStore store, double timeoutS) throws Exception {
        Properties p = base(timeoutS);
        p.setProperty("com.sun.corba.ee.ORBServerHost", host);
        p.setProperty("com.sun.corba.ee.ORBServerPort", Integer.toString(port));
        p.setProperty("com.sun.corba.ee.POA.ORBPersistentServerPort", Integer.toString(port));
        ORB orb = ORB.init(new String[0], p);
        POA root = POAHelper.narrow(orb.resolve_initial_references("RootPOA"));
        root.the_POAManager().activate();
        org.omg.CORBA.Object ref = root.servant_to_reference(new Servant(store));
        ((com.sun.corba.ee.spi.orb.ORB) orb).register_initial_reference(NAME, ref);
        return orb;
    }

    /** The sort server at {@code host}:{@code port} (one {@code _is_a} round trip: opens the connection). */
    public static Sorter resolve(ORB orb, String host, int port) {
        return SorterHelper.narrow(orb.string_to_object("corbaloc:iiop:1.2@" + host + ":" + port + "/" + NAME));
    }

    /** The IDL servant: the three operations on a {@link SortStore}. */
    static final class Servant extends SorterPOA {
        private final SortStore store;

        Servant(SortStore store) { this.store = store; }

        @Override public void put(long session, int[] data) { store.put(session, data); }

        @Override public long sort(long session) { return store.sort(session); }

        @Override public int[] take(long session) { return store.take(session); }
    }
}
