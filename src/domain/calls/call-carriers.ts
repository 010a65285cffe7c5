import type { CallEvent, CallReport, CarrierCall, CarrierPort, InboundAnswer, InboundCaller, InboundLine, ProviderCall, TranscriptItem } from "./ports.js";
import type { CallEvents } from "./call-events.js";
import type { CallLifecycle } from "./call-lifecycle.js";
import type { CallService } from "./call-service.js";
import type { DisconnectionReason } from "./call-states.js";
import type { CallsRepository } from "./calls-repository.js";
import type { ProjectConfig, ProjectSecrets } from "../projects/project-config.js";
import type { VendorCallsRepository } from "./vendor-calls-repository.js";
import { replyClosesConversation } from "./closing.js";

export interface CallCarriersDeps {
  calls: CallsRepository;
  vendor: VendorCallsRepository;
  lifecycle: CallLifecycle;
  events: CallEvents;
  service: CallService;
}

/** The domain's side of CarrierPort: what vendor carriers may ask, answered by the calls' services and stores. */
export class CallCarriers implements CarrierPort {
  constructor(private readonly deps: CallCarriersDeps) {}

  call(callId: string): Promise<CarrierCall | undefined> {
    return this.deps.calls.findById(callId);
  }

  callByVendorId(provider: string, vendorCallId: string): Promise<CarrierCall | undefined> {
    return this.deps.vendor.findByProviderCallId(provider, vendorCallId);
  }

  async bind(callId: string, provider: string, vendorCallId: string): Promise<void> {
    await this.deps.vendor.bind(callId, provider, vendorCallId);
  }

  version(call: CarrierCall): Promise<{ config: ProjectConfig; secrets: ProjectSecrets }> {
    return this.deps.service.resolveVersion(call);
  }

  apply(call: CarrierCall, events: readonly CallEvent[]): Promise<void> {
    return this.deps.events.apply(call, events);
  }

  async report({ call, vendorCallId, events }: CallReport): Promise<void> {
    if (vendorCallId) await this.bind(call.id, call.provider, vendorCallId);
    await this.apply(call, events);
  }

  connect(callId: string): Promise<boolean> {
    return this.deps.lifecycle.connected(callId);
  }

  linesFor(provider: string, number: string): Promise<InboundLine[]> {
    return this.deps.service.linesFor(provider, number);
  }

  answer(line: InboundLine, caller: InboundCaller): Promise<InboundAnswer> {
    return this.deps.service.answerVendorCaller(line, caller);
  }

  carry(callId: string): Promise<boolean> {
    return this.deps.lifecycle.carry(callId);
  }

  rejoin(callId: string): Promise<boolean> {
    return this.deps.lifecycle.rejoined(callId);
  }

  async end(callId: string, reason: DisconnectionReason): Promise<void> {
    await this.deps.lifecycle.finish(callId, reason);
  }

  agentFor(call: CarrierCall, recorded?: number): Promise<ProviderCall> {
    return this.deps.service.agentFor(call, recorded);
  }

  async history(call: CarrierCall): Promise<TranscriptItem[]> {
    return this.deps.lifecycle.history(call.thread_id, call.id);
  }

  closesConversation(reply: string): boolean {
    return replyClosesConversation(reply);
  }

  transfer(callId: string, number: string): Promise<void> {
    return this.deps.service.transfer(callId, number);
  }
}
