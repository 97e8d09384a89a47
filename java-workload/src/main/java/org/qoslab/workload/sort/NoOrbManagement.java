package org.qoslab.workload.sort;

import javax.management.ObjectName;
import org.glassfish.gmbal.ManagedObjectManager;
import org.glassfish.gmbal.ManagedObjectManagerFactory;
import org.glassfish.gmbal.ManagedObjectManagerService;

/**
 * The GlassFish ORB's JMX management, switched off: {@code ORB.init} always asks gmbal for a
 * {@code ManagedObjectManager}; the ORB's pom brings only {@code gmbal-api-only}, whose factory
 * finds no implementation ("No ManagedObjectManagerFactory found"), and the full gmbal 4.1.0
 * fails on the ORB's classes ("GMBALTLIB00004: Multiple upper bounds not supported", measured).
 * This service (META-INF/services) hands out gmbal's own no-op manager instead.
 */
public final class NoOrbManagement implements ManagedObjectManagerService {
    @Override
    public ManagedObjectManager create(String domain) {
        return ManagedObjectManagerFactory.createNOOP();
    }

    @Override
    public ManagedObjectManager create(ObjectName rootParent) {
        return ManagedObjectManagerFactory.createNOOP();
    }
}
